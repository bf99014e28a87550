// The fake node a plugin serves: its GPUs (as the shared inventory describes
// them), how they are shared, and where a container reaches each one. Read
// from NODE.json; every mistake is a gpulab::UsageError naming the field.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "gpulab/inventory/node_inventory.hpp"

namespace device_plugin {

// Where a container reaches one GPU: the plugin's business, not the inventory's.
struct GpuPaths {
  std::string device_node;  // host path injected into the container, "/dev/nvidia<index>"
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
  // The GPUs in index order: id = UUID ("GPU-<index>" unless the config names
  // one), model = the product label, memory, NUMA node, and an NVLink link
  // each way between paired GPUs. Partitions and health are DeviceState's.
  gpulab::inventory::NodeInventory inventory;
  std::vector<GpuPaths> paths;  // per GPU, same order
  // From --inventory (inventory_node.hpp): HAL devices, whole only, one
  // resource per backend, the agent's env and device files on Allocate.
  bool from_inventory = false;
  int replicas = 4;             // time-slicing replicas per GPU
  int mps_replicas = 4;         // MPS clients per GPU ("mps": {"replicas": N})
  MigConfig mig;

  [[nodiscard]] std::size_t gpu_count() const { return inventory.accelerators.size(); }
  [[nodiscard]] const gpulab::inventory::Accelerator& gpu(int index) const {
    return inventory.accelerators.at(static_cast<std::size_t>(index));
  }
  // A node has one product and memory size, as gpu-feature-discovery labels it.
  [[nodiscard]] const std::string& product() const { return gpu(0).model; }
  [[nodiscard]] std::uint64_t memory_bytes() const { return gpu(0).memory_bytes; }
  [[nodiscard]] bool nvlinked(int a, int b) const;
};

// What "nvlink_pairs" wires: NVLink 4 of an H100 SXM, 900 GB/s.
inline constexpr double kNvlinkGbps = 900;

// 4 GPUs, 4 replicas, 7 x 1g.10gb each, NVLink pairs {0,1} and {2,3}: the curriculum's node.
NodeConfig default_node();
NodeConfig parse_node_config(const std::string& json_text, const std::string& source);
// A node config lists a few GPUs; the cap refuses /dev/zero or an endless pipe.
inline constexpr std::size_t kMaxNodeConfigBytes = std::size_t{16} << 20;
// Throws gpulab::UsageError naming the file when it is missing, a directory,
// a device, larger than kMaxNodeConfigBytes or not a valid config.
NodeConfig load_node_config(const std::string& path);

}  // namespace device_plugin
