// The plugin's contract without the transport: what each mode advertises,
// what Allocate injects, and every refusal.
#include <gtest/gtest.h>

#include "device_plugin/device_state.hpp"
#include "gpulab/errors.hpp"

namespace dp = device_plugin;

namespace {

dp::ErrorCode refusal(dp::DeviceState& s, const std::string& resource, std::vector<std::string> ids) {
  try {
    s.allocate(resource, {std::move(ids)});
  } catch (const dp::DeviceError& e) {
    return e.code;
  }
  ADD_FAILURE() << "allocation was not refused";
  return dp::ErrorCode::kInvalidArgument;
}

std::string visible(dp::DeviceState& s, const std::string& resource, std::vector<std::string> ids) {
  return s.allocate(resource, {std::move(ids)}).at(0).envs.at("NVIDIA_VISIBLE_DEVICES");
}

}  // namespace

TEST(Advertise, WholeTimesliceAndMigUnitCounts) {
  dp::DeviceState whole(dp::default_node(), dp::Mode::kWhole);
  dp::DeviceState ts(dp::default_node(), dp::Mode::kTimeslice);
  dp::DeviceState mig(dp::default_node(), dp::Mode::kMig);
  EXPECT_EQ(whole.resources(), std::vector<std::string>{"nvidia.com/gpu"});
  EXPECT_EQ(whole.list("nvidia.com/gpu").size(), 4u);
  EXPECT_EQ(ts.list("nvidia.com/gpu").size(), 16u);
  EXPECT_EQ(ts.list("nvidia.com/gpu")[3].id, "GPU-0::3");
  EXPECT_EQ(mig.resources(), std::vector<std::string>{"nvidia.com/mig-1g.10gb"});
  EXPECT_EQ(mig.list("nvidia.com/mig-1g.10gb").size(), 28u);
  EXPECT_EQ(mig.list("nvidia.com/mig-1g.10gb")[2].id, "MIG-0-2");
  for (const auto& d : ts.list("nvidia.com/gpu")) EXPECT_TRUE(d.healthy);
}

TEST(Advertise, MigSingleStrategyUsesTheGpuResourceName) {
  auto node = dp::default_node();
  node.mig.strategy = "single";
  dp::DeviceState s(node, dp::Mode::kMig);
  EXPECT_EQ(s.resources(), std::vector<std::string>{"nvidia.com/gpu"});
  EXPECT_EQ(s.list("nvidia.com/gpu").size(), 28u);
}

TEST(Allocate, WholeGpusGetEnvDeviceNodesAndMounts) {
  dp::DeviceState s(dp::default_node(), dp::Mode::kWhole);
  const auto a = s.allocate("nvidia.com/gpu", {{"GPU-0", "GPU-1"}}).at(0);
  EXPECT_EQ(a.envs.at("NVIDIA_VISIBLE_DEVICES"), "GPU-0,GPU-1");
  ASSERT_GE(a.devices.size(), 2u);
  EXPECT_EQ(a.devices[0].host_path, "/dev/nvidia0");
  EXPECT_EQ(a.devices[1].host_path, "/dev/nvidia1");
  EXPECT_EQ(a.devices[0].permissions, "rw");
  bool ctl = false;
  for (const auto& d : a.devices) ctl = ctl || d.host_path == "/dev/nvidiactl";
  EXPECT_TRUE(ctl) << "without /dev/nvidiactl the container cannot reach the GPU";
  ASSERT_EQ(a.mounts.size(), 2u);
  EXPECT_EQ(a.mounts[0].container_path, "/var/run/nvidia-container-devices/GPU-0");
}

// The curriculum's named assertion: replicas share hardware, and the env proves it.
TEST(Allocate, TwoReplicasOfGpu0YieldTheSameNvidiaVisibleDevices) {
  dp::DeviceState s(dp::default_node(), dp::Mode::kTimeslice);
  const std::string a = visible(s, "nvidia.com/gpu", {"GPU-0::0"});
  const std::string b = visible(s, "nvidia.com/gpu", {"GPU-0::3"});
  EXPECT_EQ(a, "GPU-0");
  EXPECT_EQ(a, b);
  EXPECT_EQ(visible(s, "nvidia.com/gpu", {"GPU-1::0", "GPU-1::1"}), "GPU-1");  // listed once
}

TEST(Allocate, MigInstanceUsesTheMigDeviceName) {
  dp::DeviceState s(dp::default_node(), dp::Mode::kMig);
  EXPECT_EQ(visible(s, "nvidia.com/mig-1g.10gb", {"MIG-0-2"}), "MIG-GPU-0/2/0");
  EXPECT_EQ(visible(s, "nvidia.com/mig-1g.10gb", {"MIG-3-6"}), "MIG-GPU-3/6/0");
}

TEST(Refusals, UnknownOverReplicaDoubleAllocatedAndUnhealthy) {
  dp::DeviceState ts(dp::default_node(), dp::Mode::kTimeslice);
  EXPECT_EQ(refusal(ts, "nvidia.com/gpu", {"GPU-9::0"}), dp::ErrorCode::kNotFound);
  EXPECT_EQ(refusal(ts, "nvidia.com/gpu", {"GPU-0::4"}), dp::ErrorCode::kInvalidArgument);
  EXPECT_EQ(refusal(ts, "nvidia.com/gpu", {"GPU-0::-1"}), dp::ErrorCode::kInvalidArgument);
  EXPECT_EQ(refusal(ts, "nvidia.com/gpu", {"GPU-0"}), dp::ErrorCode::kInvalidArgument);
  EXPECT_EQ(refusal(ts, "nvidia.com/other", {"GPU-0::0"}), dp::ErrorCode::kNotFound);
  ts.allocate("nvidia.com/gpu", {{"GPU-0::1"}});
  EXPECT_EQ(refusal(ts, "nvidia.com/gpu", {"GPU-0::1"}), dp::ErrorCode::kAlreadyExists);
  EXPECT_EQ(refusal(ts, "nvidia.com/gpu", {"GPU-2::0", "GPU-2::0"}), dp::ErrorCode::kInvalidArgument);
  ts.mark_unhealthy(2, 79);
  EXPECT_EQ(refusal(ts, "nvidia.com/gpu", {"GPU-2::3"}), dp::ErrorCode::kFailedPrecondition);
  dp::DeviceState mig(dp::default_node(), dp::Mode::kMig);
  EXPECT_EQ(refusal(mig, "nvidia.com/mig-1g.10gb", {"MIG-0-7"}), dp::ErrorCode::kNotFound);
  EXPECT_EQ(refusal(mig, "nvidia.com/mig-1g.10gb", {"GPU-0"}), dp::ErrorCode::kNotFound);
}

TEST(Refusals, MessagesSayWhatWasWrong) {
  dp::DeviceState ts(dp::default_node(), dp::Mode::kTimeslice);
  try {
    ts.allocate("nvidia.com/gpu", {{"GPU-0::4"}});
    FAIL();
  } catch (const dp::DeviceError& e) {
    EXPECT_STREQ(e.what(), "'GPU-0::4' asks for replica 4 but GPU-0 has 4 replicas (0-3)");
  }
}

TEST(Refusals, APodGetsAllItsDevicesOrNone) {
  dp::DeviceState s(dp::default_node(), dp::Mode::kWhole);
  s.mark_unhealthy(3, 48);
  EXPECT_EQ(refusal(s, "nvidia.com/gpu", {"GPU-2", "GPU-3"}), dp::ErrorCode::kFailedPrecondition);
  EXPECT_EQ(visible(s, "nvidia.com/gpu", {"GPU-2"}), "GPU-2");  // GPU-2 was not taken by the failed call
}

TEST(Health, AnXidMarksEveryDeviceOfThatGpuAndBumpsTheGeneration) {
  dp::DeviceState s(dp::default_node(), dp::Mode::kTimeslice);
  const auto g0 = s.generation();
  EXPECT_TRUE(s.mark_unhealthy(1, 79));
  EXPECT_GT(s.generation(), g0);
  int unhealthy = 0;
  for (const auto& d : s.list("nvidia.com/gpu")) unhealthy += d.healthy ? 0 : 1;
  EXPECT_EQ(unhealthy, 4);
  EXPECT_TRUE(s.wait_for_change(g0, std::chrono::milliseconds(0)));
  EXPECT_FALSE(s.mark_unhealthy(9, 79));
  EXPECT_TRUE(s.mark_healthy(1));
  for (const auto& d : s.list("nvidia.com/gpu")) EXPECT_TRUE(d.healthy);
}

TEST(Isolation, EachModeStatesWhatItReallyIsolates) {
  EXPECT_EQ(dp::DeviceState(dp::default_node(), dp::Mode::kWhole).isolation(), "STRONG (dedicated physical devices)");
  EXPECT_EQ(dp::DeviceState(dp::default_node(), dp::Mode::kTimeslice).isolation(),
            "NONE (replicas share memory + faults — WARMUP Ch. 4)");
  EXPECT_EQ(dp::DeviceState(dp::default_node(), dp::Mode::kMig).isolation(), "STRONG (hardware-partitioned instance)");
}

TEST(Preferred, NvlinkPairsFirstAndMustIncludeHonoured) {
  dp::DeviceState s(dp::default_node(), dp::Mode::kWhole);
  const std::string r = "nvidia.com/gpu";
  EXPECT_EQ(s.preferred(r, {"GPU-0", "GPU-2", "GPU-3"}, {}, 2), (std::vector<std::string>{"GPU-2", "GPU-3"}));
  EXPECT_EQ(s.preferred(r, {"GPU-0", "GPU-1", "GPU-2", "GPU-3"}, {"GPU-3"}, 2),
            (std::vector<std::string>{"GPU-3", "GPU-2"}));
  EXPECT_EQ(s.preferred(r, {"GPU-0", "GPU-1", "GPU-2", "GPU-3"}, {"GPU-0", "GPU-2"}, 2),
            (std::vector<std::string>{"GPU-0", "GPU-2"}));
  EXPECT_EQ(s.preferred(r, {"GPU-1", "GPU-2", "GPU-3"}, {}, 1), (std::vector<std::string>{"GPU-1"}));
  EXPECT_THROW((void)s.preferred(r, {"GPU-0"}, {}, 2), dp::DeviceError);
  EXPECT_THROW((void)s.preferred(r, {"GPU-0", "GPU-1"}, {"GPU-2"}, 2), dp::DeviceError);
}

TEST(Preferred, ReplicasSpreadOverNvlinkPeersBeforeDoublingUp) {
  dp::DeviceState s(dp::default_node(), dp::Mode::kTimeslice);
  EXPECT_EQ(s.preferred("nvidia.com/gpu", {"GPU-0::0", "GPU-0::1", "GPU-1::0", "GPU-2::0"}, {}, 2),
            (std::vector<std::string>{"GPU-0::0", "GPU-1::0"}));
}

TEST(Labels, FeatureDiscoveryLabels) {
  dp::DeviceState s(dp::default_node(), dp::Mode::kTimeslice);
  const auto l = s.feature_labels();
  EXPECT_EQ(l.at("nvidia.com/gpu.product"), "NVIDIA-H100-80GB-HBM3");
  EXPECT_EQ(l.at("nvidia.com/gpu.memory"), "81920");
  EXPECT_EQ(l.at("nvidia.com/gpu.count"), "4");
  EXPECT_EQ(l.at("nvidia.com/gpu.replicas"), "4");
}

TEST(Modes, ParseRejectsUnknownNames) {
  EXPECT_THROW(dp::parse_mode("vgpu"), gpulab::UsageError);
  EXPECT_EQ(dp::parse_mode("mps"), dp::Mode::kMps);
}

// MPS (NVIDIA's sharing.mps): replicas like time-slicing, plus what an MPS
// client needs to reach the server and the share it gets.
TEST(Mps, AdvertisesReplicasAndInjectsThePipeAndTheClientLimits) {
  dp::NodeConfig node = dp::default_node();
  node.mps_replicas = 8;
  dp::DeviceState s(node, dp::Mode::kMps);
  EXPECT_EQ(s.resources(), std::vector<std::string>{"nvidia.com/gpu"});
  EXPECT_EQ(s.list("nvidia.com/gpu").size(), 32u);
  EXPECT_EQ(s.list("nvidia.com/gpu").at(9).id, "GPU-1::1");
  const auto a = s.allocate("nvidia.com/gpu", {{"GPU-2::7", "GPU-3::0"}}).at(0);
  EXPECT_EQ(a.envs.at("NVIDIA_VISIBLE_DEVICES"), "GPU-2,GPU-3");
  EXPECT_EQ(a.envs.at("CUDA_MPS_PIPE_DIRECTORY"), "/mps/nvidia.com/gpu/pipe");
  EXPECT_EQ(a.envs.at("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"), "12");          // 100 / 8, as the daemon rounds
  EXPECT_EQ(a.envs.at("CUDA_MPS_PINNED_DEVICE_MEM_LIMIT"), "0=10240M,1=10240M");  // 80 GiB / 8, container ordinals
  bool pipe = false, shm = false;
  for (const auto& m : a.mounts) {
    pipe |= m.container_path == "/mps/nvidia.com/gpu/pipe" && m.host_path == "/run/nvidia/mps/nvidia.com/gpu/pipe" &&
            !m.read_only;
    shm |= m.container_path == "/dev/shm" && m.host_path == "/run/nvidia/mps/shm";
  }
  EXPECT_TRUE(pipe && shm);
  EXPECT_EQ(a.devices.at(0).host_path, "/dev/nvidia2");
  // Two replicas of one GPU share the physical device and the server.
  EXPECT_EQ(visible(s, "nvidia.com/gpu", {"GPU-0::0"}), visible(s, "nvidia.com/gpu", {"GPU-0::5"}));
}

TEST(Mps, RefusalsAndTheDaemonItWouldRun) {
  dp::DeviceState s(dp::default_node(), dp::Mode::kMps);
  EXPECT_EQ(refusal(s, "nvidia.com/gpu", {"GPU-0::4"}), dp::ErrorCode::kInvalidArgument);  // 4 replicas: 0-3
  EXPECT_EQ(refusal(s, "nvidia.com/gpu", {"GPU-0"}), dp::ErrorCode::kInvalidArgument);
  EXPECT_EQ(refusal(s, "nvidia.com/gpu", {"GPU-1::0", "GPU-1::2"}), dp::ErrorCode::kInvalidArgument);
  try {
    s.allocate("nvidia.com/gpu", {{"GPU-1::0", "GPU-1::2"}});
  } catch (const dp::DeviceError& e) {
    EXPECT_EQ(std::string(e.what()),
              "'GPU-1::2' is a second MPS replica of GPU-1 for one container: an MPS client gets one share of a GPU "
              "(25% of its threads), so request replicas of different GPUs");
  }
  const dp::MpsDaemon d = s.mps();
  EXPECT_EQ(d.host_log_dir, "/run/nvidia/mps/nvidia.com/gpu/log");
  EXPECT_EQ(d.control_commands().back(), "set_default_active_thread_percentage 25");
  EXPECT_EQ(d.control_commands().front(), "set_default_device_pinned_mem_limit 0 20480M");
  EXPECT_EQ(s.feature_labels().at("nvidia.com/gpu.sharing-strategy"), "mps");
  EXPECT_EQ(s.feature_labels().at("nvidia.com/gpu.replicas"), "4");
  EXPECT_NE(s.isolation().find("WEAK"), std::string::npos);
}

TEST(Mps, NodeConfigSetsAndChecksTheReplicas) {
  EXPECT_EQ(dp::parse_node_config(R"({"gpus": 2, "mps": {"replicas": 3}})", "n.json").mps_replicas, 3);
  try {
    dp::parse_node_config(R"({"gpus": 2, "mps": {"replicas": 0}})", "n.json");
    FAIL();
  } catch (const gpulab::UsageError& e) {
    EXPECT_EQ(std::string(e.what()), "n.json: 'mps.replicas' must be between 1 and 64");
  }
}
