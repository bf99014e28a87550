// --inventory: the node the platform's agent reports, served as whole HAL
// devices, one gpulab.dev/<backend> resource per backend (no gRPC here; the
// program over the real API is in inventory_integration_test.cpp).
#include "device_plugin/inventory_node.hpp"

#include <gtest/gtest.h>

#include <fstream>

#include "device_plugin/walkthrough.hpp"
#include "gpulab/errors.hpp"
#include "gpulab/inventory/inventory_json.hpp"
#include "hal_accelerator.hpp"

namespace dp = device_plugin;
namespace inv = gpulab::inventory;
using device_plugin_test::hal_accelerator;

namespace {

// What `gpulabd agent --devices cuda:2,fast:1` reports, cuda:1 after an Xid 79.
inv::NodeInventory agent_node() {
  inv::NodeInventory n;
  n.node = "node-a";
  n.accelerators = {hal_accelerator("cuda", 0, 0), hal_accelerator("cuda", 1, 1),
                    hal_accelerator("fast", 0, 2)};
  n.accelerators[0].domain.numa_node = 1;
  n.accelerators[1].health = inv::Health::unhealthy("Xid 79: GPU has fallen off the bus");
  return n;
}

std::string refusal(inv::NodeInventory n) {
  try {
    dp::node_config_from_inventory(std::move(n), "inv.json");
  } catch (const gpulab::UsageError& e) {
    return e.what();
  }
  return "accepted";
}

}  // namespace

TEST(InventoryNode, OneResourcePerBackendOneDevicePerHalDevice) {
  const dp::DeviceState s(dp::node_config_from_inventory(agent_node(), "inv.json"),
                          dp::Mode::kWhole);
  EXPECT_EQ(s.resources(), (std::vector<std::string>{"gpulab.dev/cuda", "gpulab.dev/fast"}));
  const auto cuda = s.list("gpulab.dev/cuda");
  ASSERT_EQ(cuda.size(), 2u);
  EXPECT_EQ(cuda[0].id, "cuda:0");
  EXPECT_TRUE(cuda[0].healthy);
  EXPECT_EQ(cuda[0].numa_node, 1);
  EXPECT_EQ(cuda[1].id, "cuda:1");
  EXPECT_FALSE(cuda[1].healthy) << "the agent's verdict is advertised";
  EXPECT_EQ(cuda[1].numa_node, -1) << "not known: no topology";
  const auto fast = s.list("gpulab.dev/fast");
  ASSERT_EQ(fast.size(), 1u);
  EXPECT_EQ(fast[0].id, "fast:0");
  // What the plugin reports upstream is what it read.
  EXPECT_EQ(s.inventory(), agent_node());
}

TEST(InventoryNode, AllocateGivesTheAgentsEnvironmentAndDeviceFiles) {
  auto n = agent_node();
  n.accelerators[1].health = inv::Health::ok();
  dp::DeviceState s(dp::node_config_from_inventory(n, "inv.json"), dp::Mode::kWhole);
  const auto a = s.allocate("gpulab.dev/cuda", {{"cuda:1", "cuda:0"}});
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].envs, (std::map<std::string, std::string>{{"CUDA_VISIBLE_DEVICES", "1,0"}}));
  std::vector<std::string> files;
  for (const auto& d : a[0].devices) {
    EXPECT_EQ(d.container_path, d.host_path);
    EXPECT_EQ(d.permissions, "rw");
    files.push_back(d.host_path);
  }
  EXPECT_EQ(files, (std::vector<std::string>{"/dev/nvidia1", "/dev/nvidiactl", "/dev/nvidia-uvm",
                                             "/dev/nvidia-uvm-tools", "/dev/nvidia0"}));
  EXPECT_TRUE(a[0].mounts.empty()) << "no NVIDIA device-list mounts for HAL devices";
  // A HAL CPU device computes in host memory: nothing to inject.
  const auto f = s.allocate("gpulab.dev/fast", {{"fast:0"}});
  EXPECT_TRUE(f[0].envs.empty());
  EXPECT_TRUE(f[0].devices.empty());
}

TEST(InventoryNode, RefusalsKeepTheirStatusCodes) {
  dp::DeviceState s(dp::node_config_from_inventory(agent_node(), "inv.json"), dp::Mode::kWhole);
  const auto code = [&](const std::string& resource, const std::string& id) {
    try {
      s.allocate(resource, {{id}});
    } catch (const dp::DeviceError& e) {
      return e.code;
    }
    return dp::ErrorCode::kInvalidArgument;  // (never: each call below is refused)
  };
  EXPECT_EQ(code("gpulab.dev/cuda", "fast:0"), dp::ErrorCode::kNotFound)
      << "another backend's device";
  EXPECT_EQ(code("nvidia.com/gpu", "cuda:0"), dp::ErrorCode::kNotFound);
  EXPECT_EQ(code("gpulab.dev/cuda", "cuda:1"), dp::ErrorCode::kFailedPrecondition);
  s.allocate("gpulab.dev/cuda", {{"cuda:0"}});
  EXPECT_EQ(code("gpulab.dev/cuda", "cuda:0"), dp::ErrorCode::kAlreadyExists);
}

TEST(InventoryNode, SetHealthReadvertisesOnlyWhenTheVerdictChanges) {
  dp::DeviceState s(dp::node_config_from_inventory(agent_node(), "inv.json"), dp::Mode::kWhole);
  const auto g0 = s.generation();
  std::vector<inv::Health> h(3);
  h[1] = inv::Health::unhealthy("Xid 48: double-bit ECC error");
  EXPECT_TRUE(s.set_health(h)) << "a new reason is a change";
  EXPECT_EQ(s.generation(), g0) << "but the kubelet sees the same list";
  h[1] = inv::Health::ok();
  EXPECT_TRUE(s.set_health(h));
  EXPECT_GT(s.generation(), g0);
  EXPECT_TRUE(s.list("gpulab.dev/cuda")[1].healthy);
  EXPECT_FALSE(s.set_health(h));
}

TEST(InventoryNode, FeatureLabelsCountDevicesPerBackend) {
  const dp::DeviceState s(dp::node_config_from_inventory(agent_node(), "inv.json"),
                          dp::Mode::kWhole);
  EXPECT_EQ(s.feature_labels(),
            (std::map<std::string, std::string>{{"gpulab.dev/cuda.count", "2"},
                                                {"gpulab.dev/device.count", "3"},
                                                {"gpulab.dev/fast.count", "1"}}));
}

TEST(InventoryNode, BadInventoriesAreRefusedNamingTheField) {
  EXPECT_EQ(refusal(inv::NodeInventory{"node-a", 0, {}}),
            "inv.json: accelerators: the node has no devices to advertise");
  auto many = inv::NodeInventory{"node-a", 0, {}};
  for (int i = 0; i < 257; ++i) many.accelerators.push_back(hal_accelerator("cpu_ref", i, i));
  EXPECT_EQ(refusal(many),
            "inv.json: accelerators: 257 devices, more than the 256 a node may have");
  auto shuffled = agent_node();
  shuffled.accelerators[2].index = 7;
  EXPECT_EQ(refusal(shuffled),
            "inv.json: accelerators[2].index: must be 2 (its place in the list), got 7");
  auto unknown = agent_node();
  unknown.accelerators[0].backend = "tpu";
  EXPECT_NE(refusal(unknown).find("inv.json: accelerators[0].backend: unknown backend 'tpu'"),
            std::string::npos)
      << refusal(unknown);
  EXPECT_THROW(
      dp::DeviceState(dp::node_config_from_inventory(agent_node(), "x"), dp::Mode::kTimeslice),
      gpulab::UsageError);
}

TEST(InventoryNode, FilesAreReadWithTheSharedReaderAndParser) {
  dp::TempDir dir;
  const auto load_error = [](const std::string& path) {
    try {
      dp::load_inventory_node(path);
    } catch (const gpulab::UsageError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  const std::string good = dir.path() + "/inv.json";
  std::ofstream(good) << inv::to_json(agent_node()).dump(2);
  EXPECT_EQ(dp::load_inventory_node(good).inventory, agent_node());
  const std::string typo = dir.path() + "/typo.json";
  std::ofstream(typo) << R"({"node": "n", "accelerators": [], "acclerators": []})";
  EXPECT_EQ(load_error(typo), typo + ": acclerators: unknown field");
  EXPECT_NE(load_error(dir.path() + "/none.json").find("none.json"), std::string::npos);
  EXPECT_NE(load_error(dir.path()).find("is a directory"), std::string::npos);
}
