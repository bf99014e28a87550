// `gpulabd agent --inventory-out FILE`: the agent writes the node's inventory
// in the shared JSON form at start and again when a device turns unhealthy,
// and P06's gpu-device-plugin --inventory serves exactly that file to a
// (mock) kubelet. Plus `gpulabctl slurm gres-conf`'s output files.
#include <gtest/gtest.h>
#include <httplib.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include "gpulab/file.hpp"
#include "gpulab/inventory/inventory_json.hpp"
#include "gpulab_test/program_run.hpp"
#include "platform/local_cluster.hpp"

namespace {

using namespace platform;
using namespace std::chrono_literals;
namespace inv = gpulab::inventory;

std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class AgentInventoryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/gpulab-agent-inventory-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // The inventory in the file now, if it parses.
  std::optional<inv::NodeInventory> read_inventory() const {
    auto text = gpulab::read_text_file((dir_ / "inventory.json").string(), 1 << 20);
    if (!text) return std::nullopt;
    auto n = inv::parse_node_inventory(text.value());
    if (!n) return std::nullopt;
    return n.value();
  }

  std::filesystem::path dir_;
};

}  // namespace

TEST_F(AgentInventoryTest, TheAgentWritesItsInventoryAndRewritesItWhenADeviceFails) {
  LocalCluster cluster(GPULAB_BIN_DIR, dir_);
  cluster.start_control();
  const auto& agent = cluster.start_agent("node-a", "cpu_ref:2",
                                          {"--no-certify", "--isolation", "process",
                                           "--inventory-out", (dir_ / "inventory.json").string()});
  auto n = read_inventory();  // written before the agent serves
  ASSERT_TRUE(n) << slurp(dir_ / "inventory.json");
  EXPECT_EQ(n->node, "node-a");
  ASSERT_EQ(n->accelerators.size(), 2u);
  EXPECT_EQ(n->accelerators[0].id, "cpu_ref:0");
  EXPECT_EQ(n->accelerators[1].id, "cpu_ref:1");
  EXPECT_EQ(n->accelerators[1].index, 1);
  EXPECT_EQ(n->accelerators[1].backend, "cpu_ref");
  EXPECT_NE(n->accelerators[1].link_to("cpu_ref:0"), nullptr) << "the agent's nominal topology";
  EXPECT_TRUE(n->accelerators[1].health.healthy);

  httplib::Client c(agent.url);
  const auto res = c.Post("/v1/faults", "xid:79:1", "text/plain");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200) << res->body;
  ASSERT_TRUE(wait_until(
      [&] {
        n = read_inventory();
        return n && !n->accelerators[1].health.healthy;
      },
      20s))
      << slurp(dir_ / "inventory.json");
  EXPECT_EQ(n->accelerators[1].health.reason, "Xid 79: GPU has fallen off the bus");
  EXPECT_TRUE(n->accelerators[0].health.healthy);
}

TEST_F(AgentInventoryTest, AnUnwritableInventoryStopsTheAgentAtStartNamingTheFile) {
  const auto r = gpulab_test::run_program("gpulabd",
                                          "agent --name node-a --devices cpu_ref:1 --no-certify "
                                          "--isolation process --control http://127.0.0.1:9 "
                                          "--work " +
                                              (dir_ / "work").string() + " --inventory-out " +
                                              (dir_ / "no-such-dir" / "inventory.json").string(),
                                          gpulab_test::Stderr::kSeparate, "timeout 60");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("gpulabd: error: --inventory-out: "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find((dir_ / "no-such-dir" / "inventory.json").string()), std::string::npos)
      << r.err;
}

// Across the labs: what the agent writes, the device plugin advertises.
TEST_F(AgentInventoryTest, TheDevicePluginServesTheAgentsInventoryToTheKubelet) {
  const std::filesystem::path bin = GPULAB_BIN_DIR;
  if (!std::filesystem::exists(bin / "gpu-device-plugin") ||
      !std::filesystem::exists(bin / "mock-kubelet"))
    GTEST_SKIP() << "p06-device-plugin is not in this build (GPULAB_LABS)";
  LocalCluster cluster(GPULAB_BIN_DIR, dir_);
  cluster.start_control();
  const auto file = (dir_ / "inventory.json").string();
  const auto& agent = cluster.start_agent(
      "node-a", "cpu_ref:2", {"--no-certify", "--isolation", "process", "--inventory-out", file});
  httplib::Client c(agent.url);
  ASSERT_TRUE(c.Post("/v1/faults", "xid:79:0", "text/plain"));
  ASSERT_TRUE(wait_until(
      [&] {
        const auto n = read_inventory();
        return n && !n->accelerators[0].health.healthy;
      },
      20s));
  const auto sockets = dir_ / "kubelet";
  std::filesystem::create_directories(sockets);
  const pid_t plugin = fork();
  if (plugin == 0) {
    const std::string prog = (bin / "gpu-device-plugin").string();
    execl(prog.c_str(), prog.c_str(), "--inventory", file.c_str(), "--socket-dir", sockets.c_str(),
          nullptr);
    _exit(127);
  }
  const auto k =
      gpulab_test::run_program("mock-kubelet",
                               "--socket-dir " + sockets.string() +
                                   " --resource gpulab.dev/cpu_ref --allocate 1 --timeout 30",
                               gpulab_test::Stderr::kSeparate, "timeout 60");
  kill(plugin, SIGTERM);
  int status = 0;
  waitpid(plugin, &status, 0);
  EXPECT_EQ(k.exit_code, 0) << k.err;
  EXPECT_NE(k.out.find("allocate 1 x gpulab.dev/cpu_ref -> [cpu_ref:1]\n"), std::string::npos)
      << "cpu_ref:0 is unhealthy in the agent's file\n"
      << k.out;
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

TEST_F(AgentInventoryTest, GresConfWritesEachFileWhereItIsTold) {
  const std::string args =
      "slurm gres-conf --node n1 --devices cpu_ref:1 --device-file cpu_ref:0=/dev/null";
  auto r = gpulab_test::run_program("gpulabctl", args + " --out " + dir_.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "wrote " + (dir_ / "gres.conf").string() + " (1 device(s)) and " +
                       (dir_ / "gpulab-nodes.conf").string() +
                       ":\nNodeName=n1 Gres=gpu:cpu_ref:1\n");
  EXPECT_EQ(slurp(dir_ / "gpulab-nodes.conf"), "NodeName=n1 Gres=gpu:cpu_ref:1\n");
  EXPECT_NE(slurp(dir_ / "gres.conf").find("NodeName=n1 Name=gpu Type=cpu_ref File=/dev/null\n"),
            std::string::npos);

  const auto nodes = dir_ / "nodes.d" / "n1.conf";
  std::filesystem::create_directories(nodes.parent_path());
  r = gpulab_test::run_program("gpulabctl", args + " --nodes-out " + nodes.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(slurp(nodes), "NodeName=n1 Gres=gpu:cpu_ref:1\n");
  EXPECT_EQ(r.out.rfind("# gres.conf for Slurm node n1", 0), 0u) << "gres.conf still printed:\n"
                                                                 << r.out;

  r = gpulab_test::run_program("gpulabctl", args + " --out " + dir_.string() + " --gres-conf-out " +
                                                (dir_ / "missing" / "gres.conf").string());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.err.find("gpulabctl: error: "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find((dir_ / "missing" / "gres.conf").string()), std::string::npos) << r.err;
}
