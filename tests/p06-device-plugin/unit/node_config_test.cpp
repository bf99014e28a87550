// NODE.json: a good config parses; each mistake names itself.
#include <gtest/gtest.h>

#include "device_plugin/node_config.hpp"
#include "gpulab/errors.hpp"

namespace dp = device_plugin;

namespace {
std::string error_of(const std::string& json) {
  try {
    dp::parse_node_config(json, "node.json");
  } catch (const gpulab::UsageError& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST(NodeConfig, ShippedConfigsParse) {
  for (const char* f : {"/config/node.json", "/config/mig-dynamic.json", "/config/fakegpu.json"}) {
    SCOPED_TRACE(f);
    EXPECT_NO_THROW(dp::load_node_config(std::string(GPULAB_LAB_DIR) + f));
  }
  const auto n = dp::load_node_config(std::string(GPULAB_LAB_DIR) + "/config/node.json");
  EXPECT_EQ(n.gpu_count(), 4u);
  EXPECT_EQ(n.gpu(2).id, "GPU-2");
  EXPECT_EQ(n.gpu(2).domain.numa_node, 1);
  EXPECT_EQ(n.replicas, 4);
  EXPECT_TRUE(n.nvlinked(0, 1) && n.nvlinked(1, 0) && n.nvlinked(2, 3));
  EXPECT_FALSE(n.nvlinked(1, 2));
  EXPECT_EQ(n.product(), "NVIDIA-H100-80GB-HBM3");
  EXPECT_EQ(n.memory_bytes(), std::uint64_t{80} << 30);
  EXPECT_EQ(
      dp::load_node_config(std::string(GPULAB_LAB_DIR) + "/config/fakegpu.json").gpu(0).backend,
      "fakegpu");
}

TEST(NodeConfig, ListedGpusKeepTheirUuidsAndDeviceNodes) {
  const auto n = dp::parse_node_config(
      R"({"gpus": [{"uuid": "GPU-b1028956", "device_node": "/dev/fakegpu"}], "nvlink_pairs": []})", "x");
  EXPECT_EQ(n.gpu(0).id, "GPU-b1028956");
  EXPECT_EQ(n.paths[0].device_node, "/dev/fakegpu");
  EXPECT_EQ(n.paths[0].container_path, "/dev/fakegpu");  // defaults to the host path
}

TEST(NodeConfig, ADeviceOutsideDevGetsItsOwnContainerPath) {
  const auto n = dp::parse_node_config(
      R"({"gpus": [{"device_node": "/run/fakegpu/fakegpu", "container_path": "/dev/fakegpu"}]})", "x");
  EXPECT_EQ(n.paths[0].device_node, "/run/fakegpu/fakegpu");
  EXPECT_EQ(n.paths[0].container_path, "/dev/fakegpu");
  EXPECT_EQ(dp::parse_node_config(R"({"gpus": 2})", "x").paths[1].container_path, "/dev/nvidia1");
}

TEST(NodeConfig, MalformedConfigsSayWhy) {
  EXPECT_EQ(error_of("{"), "node.json: not valid JSON (byte 2)");
  EXPECT_EQ(error_of("[]"), "node.json: the node config must be a JSON object");
  EXPECT_EQ(error_of("{}"), "node.json: 'gpus' is missing (a count, or a list of {\"uuid\", \"device_node\"})");
  EXPECT_EQ(error_of(R"({"gpus": 0})"), "node.json: 'gpus' must be between 1 and 64");
  EXPECT_EQ(error_of(R"({"gpus": "four"})"), "node.json: 'gpus' must be a count (1-64) or a non-empty list of at most 64 GPUs");
  EXPECT_EQ(error_of(R"({"gpus": 4, "timeslice": {"replicas": 0}})"), "node.json: 'timeslice.replicas' must be between 1 and 64");
  EXPECT_EQ(error_of(R"({"gpus": 4, "memory_gb": "lots"})"), "node.json: 'memory_gb' has the wrong type");
  EXPECT_EQ(error_of(R"({"gpus": 2, "nvlink_pairs": [[0, 2]]})"), "node.json: nvlink pair [0, 2] names a GPU that does not exist");
  EXPECT_EQ(error_of(R"({"gpus": [{"uuid": "A"}, {"uuid": "A"}]})"), "node.json: gpus[1].uuid 'A' is a duplicate");
  EXPECT_EQ(error_of(R"({"gpus": [{"uuid": "GPU-0::1"}]})"), "node.json: gpus[0].uuid must be 1-40 characters without '::' or ','");
  EXPECT_EQ(error_of(R"({"gpus": [{"device_node": "dev/x"}]})"), "node.json: gpus[0].device_node must be an absolute path");
  EXPECT_EQ(error_of(R"({"gpus": [{"device_node": "/tmp/g", "container_path": "/tmp/g"}]})"),
            "node.json: gpus[0].container_path must be under /dev/ (give one when device_node is not)");
  EXPECT_EQ(error_of(R"({"gpus": 4, "mig": {"strategy": "none"}})"), "node.json: mig.strategy must be 'single' or 'mixed', got 'none'");
  EXPECT_EQ(error_of(R"({"gpus": 4, "mig": {"layout": ["5g.50gb"]}})"), "node.json: mig.layout: unknown MIG profile '5g.50gb'");
  EXPECT_EQ(error_of(R"({"gpus": 4, "mig": {"layout": ["4g.40gb", "4g.40gb"]}})"),
            "node.json: mig.layout: '4g.40gb' does not fit after the instances before it");
  EXPECT_EQ(error_of(R"({"gpus": 4, "mig": {"strategy": "single", "layout": ["3g.40gb", "1g.10gb"]}})"),
            "node.json: mig.strategy 'single' needs one MIG profile on the node (more than one MIG device type present)");
  EXPECT_EQ(error_of(R"({"gpus": 4, "mig": {"strategy": "single", "dynamic": true}})"),
            "node.json: dynamic MIG needs mig.strategy 'mixed' (one resource per profile)");
}

TEST(NodeConfig, MissingFileIsAUsageError) {
  EXPECT_THROW(dp::load_node_config("/nonexistent/node.json"), gpulab::UsageError);
}

TEST(NodeConfig, TheSharedInventoryChecksWhatThePluginDoesNot) {
  EXPECT_EQ(error_of(R"({"gpus": [{"uuid": "GPU/0"}]})"),
            "node.json: accelerators[0].id: 'GPU/0' contains '/' (reserved for <node>/<id>)");
  EXPECT_EQ(error_of(R"({"gpus": [{"numa_node": -4}]})"),
            "node.json: accelerators[0].domain.numa_node: must be -1 (unknown) or >= 0, got -4");
  EXPECT_EQ(error_of(R"({"gpus": 2, "memory_gb": 100000})"),
            "node.json: 'memory_gb' must be at most 65536 (it is in GB)");
  EXPECT_EQ(error_of(R"({"gpus": 2, "backend": "hip"})"),
            "node.json: 'backend' must be 'cuda' or 'fakegpu', got 'hip'");
}

TEST(NodeConfig, NvlinkPairsBecomeLinksBothWays) {
  const auto n =
      dp::parse_node_config(R"({"node": "n7", "gpus": 3, "nvlink_pairs": [[0, 2], [2, 0]]})", "x");
  EXPECT_EQ(n.inventory.node, "n7");
  ASSERT_EQ(n.gpu(0).links.size(), 1u) << "a pair given twice is one bridge";
  EXPECT_EQ(n.gpu(0).links[0],
            (gpulab::inventory::Link{"GPU-2", gpulab::inventory::LinkKind::kNvlink, 900, 0}));
  EXPECT_EQ(n.gpu(2).links[0].peer, "GPU-0");
  EXPECT_TRUE(n.gpu(1).links.empty());
  EXPECT_TRUE(gpulab::inventory::validate(n.inventory).empty());
}
