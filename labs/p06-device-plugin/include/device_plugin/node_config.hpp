// The fake node a plugin serves: its GPUs, how they are shared, and which
// pairs are NVLink-connected. Read from NODE.json; every mistake is a
// gpulab::UsageError naming the field.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace device_plugin {

struct GpuInfo {
  int index = 0;
  std::string uuid;         // "GPU-<index>" unless the config names one
  std::string device_node;  // host path injected into the container, "/dev/nvidia<index>"
  int numa_node = 0;
  // Where the container sees it; the host path unless the config says otherwise
  // (a device served from a FUSE mount, e.g. P04's fakegpud, lives outside /dev).
  std::string container_path;
};

// MIG: the instances each GPU is partitioned into (static), or profiles
// created on demand from free slices (dynamic; mixed strategy only).
struct MigConfig {
  std::string strategy = "mixed";         // "single" | "mixed" (NVIDIA's names)
  std::vector<std::string> layout;        // per GPU, e.g. 7 x "1g.10gb"; empty with dynamic
  bool dynamic = false;
  std::vector<std::string> profiles;      // dynamic: advertised profiles
};

struct NodeConfig {
  std::string product = "NVIDIA-H100-80GB-HBM3";
  int memory_gb = 80;
  std::vector<GpuInfo> gpus;
  int replicas = 4;                                  // time-slicing replicas per GPU
  std::vector<std::pair<int, int>> nvlink_pairs;     // GPU indices wired by NVLink
  MigConfig mig;
};

// 4 GPUs, 4 replicas, 7 x 1g.10gb each, NVLink pairs {0,1} and {2,3}: the curriculum's node.
NodeConfig default_node();
NodeConfig parse_node_config(const std::string& json_text, const std::string& source);
NodeConfig load_node_config(const std::string& path);

}  // namespace device_plugin
