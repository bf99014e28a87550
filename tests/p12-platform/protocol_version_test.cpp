// Version skew between an agent and the control plane (docs/release/compatibility.md): an
// agent of another protocol is refused with one message that names both versions, so the
// operator reading the agent's log knows which side to upgrade.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>

#include "platform/control_plane.hpp"
#include "platform/inventory.hpp"

namespace {

using namespace platform;

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

  std::filesystem::path dir_;
  std::unique_ptr<ControlPlane> cp_;
};

TEST_F(ProtocolVersionTest, AnOlderAgentIsRefusedNamingBothVersions) {
  const int old = kProtocolVersion - 1;
  EXPECT_EQ(refusal(old),
            fmt::format("protocol: agent speaks version {}, this control plane version {}", old,
                        kProtocolVersion));
  EXPECT_TRUE(cp_->list_nodes().empty());
}

TEST_F(ProtocolVersionTest, ANewerAgentIsRefusedNamingBothVersions) {
  const int newer = kProtocolVersion + 1;
  EXPECT_EQ(refusal(newer),
            fmt::format("protocol: agent speaks version {}, this control plane version {}", newer,
                        kProtocolVersion));
  EXPECT_TRUE(cp_->list_nodes().empty());
}

TEST_F(ProtocolVersionTest, TheSameProtocolRegisters) {
  EXPECT_EQ(refusal(kProtocolVersion), "");
  EXPECT_EQ(cp_->list_nodes().size(), 1u);
}

}  // namespace
