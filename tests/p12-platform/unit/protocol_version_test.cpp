// Version skew between an agent and the control plane (docs/release/compatibility.md): a
// control plane at protocol N accepts agents at N-1 and keeps working with them (the rolling
// upgrade of docs/release/rolling-upgrade.md: control plane first, then the agents one by
// one); an agent of N-2 or of a newer protocol is refused with one message that names both
// versions, so the operator reading the agent's log knows which side to upgrade.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>

#include "platform/control_plane.hpp"
#include "platform/control_server.hpp"
#include "platform/inventory.hpp"

namespace {

using namespace platform;
using gpulab::Json;

class ProtocolVersionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/gpulab-protocol-test-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    ControlOptions o;
    o.state_dir = dir_;
    o.public_url = "http://127.0.0.1:1";
    o.clock = [] { return 1000.0; };
    cp_ = std::make_unique<ControlPlane>(o);
  }
  void TearDown() override {
    cp_.reset();
    std::filesystem::remove_all(dir_);
  }

  static Node agent(int protocol) {
    Node n;
    n.name = "a";
    n.address = "http://127.0.0.1:2";
    n.protocol = protocol;
    n.isolation = "process";
    n.devices = parse_device_spec("cpu_ref:1");
    return n;
  }

  // The refusal's message, or "" when the agent was accepted.
  std::string refusal(int protocol) {
    try {
      cp_->register_node(agent(protocol));
    } catch (const ApiError& e) {
      EXPECT_EQ(e.status, 400);
      return e.what();
    }
    return "";
  }

  static std::string refused(int agent_protocol) {
    return fmt::format(
        "protocol: agent speaks version {}, this control plane version {} (accepts agents of "
        "versions {} to {})",
        agent_protocol, kProtocolVersion, kProtocolVersion - 1, kProtocolVersion);
  }

  std::filesystem::path dir_;
  std::unique_ptr<ControlPlane> cp_;
};

TEST_F(ProtocolVersionTest, TheWindowIsThisVersionAndThePreviousOne) {
  EXPECT_EQ(kOldestAgentProtocol, kProtocolVersion - 1);
}

TEST_F(ProtocolVersionTest, AnAgentTwoVersionsOlderIsRefusedNamingBothVersions) {
  const int old = kProtocolVersion - 2;
  EXPECT_EQ(refusal(old), refused(old));
  EXPECT_TRUE(cp_->list_nodes().empty());
}

TEST_F(ProtocolVersionTest, ANewerAgentIsRefusedNamingBothVersions) {
  const int newer = kProtocolVersion + 1;
  EXPECT_EQ(refusal(newer), refused(newer));
  EXPECT_TRUE(cp_->list_nodes().empty());
}

TEST_F(ProtocolVersionTest, TheSameProtocolRegisters) {
  EXPECT_EQ(refusal(kProtocolVersion), "");
  EXPECT_EQ(cp_->list_nodes().size(), 1u);
}

// The upgrade drill, message by message: what a protocol 1 agent (0.0.x, before the shared
// inventory) sends, byte for byte, to a control plane at protocol 2 — registration, a
// heartbeat reporting a device's health, a task's status — and what it gets back.
TEST_F(ProtocolVersionTest, AnAgentOneVersionOlderRegistersAndItsWorkRuns) {
  static_assert(kProtocolVersion == 2,
                "the N-1 agent below speaks protocol 1: update it with the protocol");
  const Json v1_device_0 = Json::parse(
      R"({"id":"cpu_ref:0","backend":"cpu_ref","index":0,"healthy":true,"health_reason":"","dtypes":["f32"]})");
  const Json v1_device_1 = Json::parse(
      R"({"id":"cpu_ref:1","backend":"cpu_ref","index":1,"healthy":true,"health_reason":"","dtypes":["f32"]})");
  const Json registration{{"name", "old-agent"},
                          {"address", "http://127.0.0.1:2"},
                          {"protocol", 1},
                          {"isolation", "process"},
                          {"devices", Json::array({v1_device_0, v1_device_1})}};
  ASSERT_NO_THROW(cp_->register_node(node_from_register_json(registration)));
  ASSERT_EQ(cp_->list_nodes().size(), 1U);
  const Node n = cp_->list_nodes()[0];
  EXPECT_EQ(n.protocol, 1);
  EXPECT_EQ(n.state, NodeState::kReady);
  ASSERT_EQ(n.devices.size(), 2U);  // the shared inventory's accelerators, linked as one node
  EXPECT_EQ(n.devices[1].id, "cpu_ref:1");
  EXPECT_EQ(n.devices[1].dtypes, std::vector<std::string>{"f32"});
  EXPECT_NE(n.devices[1].link_to("cpu_ref:0"), nullptr);
  EXPECT_EQ(cp_->node_protocol("old-agent"), 1);

  // A heartbeat in protocol 1's words: cpu_ref:1 reports Xid 79.
  Json bad_device = v1_device_1;
  bad_device["healthy"] = false;
  bad_device["health_reason"] = "Xid 79";
  const Json beat{{"devices", Json::array({v1_device_0, bad_device})}, {"tasks", Json::array()}};
  auto hb = heartbeat_from_json("old-agent", beat, cp_->node_protocol("old-agent"));
  EXPECT_TRUE(cp_->heartbeat(hb, std::chrono::milliseconds(0)).empty());
  EXPECT_EQ(cp_->list_nodes()[0].devices[1].health.reason, "Xid 79");

  // A job lands on the healthy device of the old agent and finishes through its reports.
  const auto job = cp_->submit(Json{{"name", "m"},
                                    {"kind", "matmul"},
                                    {"backend", "cpu_ref"},
                                    {"params", {{"n", 64}}}},
                               "")
                       .first;
  cp_->tick();
  const auto work = cp_->heartbeat(hb, std::chrono::milliseconds(0));
  ASSERT_EQ(work.size(), 1U);
  const Json assignment = assignment_to_json(work[0]);  // what the old agent reads
  EXPECT_EQ(assignment.at("node"), "old-agent");
  EXPECT_EQ(assignment.at("device"), "cpu_ref:0");
  EXPECT_EQ(assignment.at("argv").at(0), "matmul");
  cp_->report_task("old-agent", report_from_json(Json{{"id", assignment.at("id")},
                                                      {"state", "succeeded"},
                                                      {"exit_code", 0},
                                                      {"message", "exited 0"}}));
  EXPECT_EQ(cp_->get_job(job.id).state, JobState::kSucceeded);
}

TEST_F(ProtocolVersionTest, AProtocol1AgentsDevicesAreCheckedLikeAnyOther) {
  const Json registration{{"name", "old-agent"},
                          {"address", "http://127.0.0.1:2"},
                          {"protocol", 1},
                          {"devices", Json::array({Json{{"id", "x"}}})}};
  try {
    (void)node_from_register_json(registration);
    FAIL() << "a protocol 1 device without backend and index was accepted";
  } catch (const ApiError& e) {
    EXPECT_EQ(e.status, 400);
    EXPECT_NE(std::string(e.what()).find("needs backend (string) and index (integer)"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
