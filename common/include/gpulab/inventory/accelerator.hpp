// One accelerator as every lab and the platform describe it: what it is
// (id, vendor, the HAL backend that drives it, model, memory), how it is
// shared (MIG instances, time-slice replicas), where it sits (NVLink island,
// NUMA node), what it is wired to, and whether it is healthy. A description
// only: labs build their own fast indexes from it.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace gpulab::inventory {

enum class LinkKind { kNvlink, kPcie, kInfiniband, kEthernet };
// "nvlink", "pcie", "ib", "ethernet": the names the JSON form uses.
std::string_view link_kind_name(LinkKind kind);
std::optional<LinkKind> parse_link_kind(std::string_view name);

// Link peers that are not accelerators: the host's memory (PCIe, or NVLink-C2C
// on a Grace board) and the accelerator's NIC rail into the cluster fabric.
inline constexpr std::string_view kHostPeer = "host";
inline constexpr std::string_view kNetworkPeer = "network";

struct Link {
  // An accelerator id on the same node, "<node>/<id>" on another node, or
  // kHostPeer / kNetworkPeer.
  std::string peer;
  LinkKind kind = LinkKind::kNvlink;
  double bandwidth_gbps = 0;  // GB/s (1e9 bytes) per direction
  double latency_us = 0;      // per hop; 0 = not modelled
  bool operator==(const Link&) const = default;
};

enum class PartitionKind { kMig, kTimeSlice };
std::string_view partition_kind_name(PartitionKind kind);  // "mig", "timeslice"
std::optional<PartitionKind> parse_partition_kind(std::string_view name);

// A share of one accelerator that is handed out on its own.
struct Partition {
  std::string id;  // unique on the node: "MIG-0-2", "GPU-0::3"
  PartitionKind kind = PartitionKind::kMig;
  std::string profile;  // MIG profile ("1g.10gb"); empty for time slices
  // A MIG instance's own memory; a time slice's is its accelerator's whole
  // memory, shared with its sibling replicas (no isolation).
  std::uint64_t memory_bytes = 0;
  bool operator==(const Partition&) const = default;
};

struct Domain {
  // The NVLink island (switch domain) id, shared by every accelerator in it
  // and unique in the cluster; empty = the accelerator's node is its island.
  std::string island;
  int numa_node = -1;  // -1 = not known
  bool operator==(const Domain&) const = default;
};

struct Health {
  bool healthy = true;
  std::string reason;  // why not ("Xid 79"); empty when healthy
  static Health ok() { return {}; }
  static Health unhealthy(std::string why) { return {false, std::move(why)}; }
  bool operator==(const Health&) const = default;
};

struct Accelerator {
  std::string id;       // stable across restarts: "gpu0", a UUID "GPU-8f0c..."; no '/' or blanks
  int index = 0;        // the driver's ordinal on its node
  std::string vendor;   // "nvidia", "amd", "cpu", "gpulab" (simulated / fake devices)
  std::string backend;  // the HAL backend that runs on it: one of known_backends()
  std::string model;    // "NVIDIA H100 80GB HBM3"
  std::uint64_t memory_bytes = 0;
  double memory_bandwidth_gbps = 0;  // 0 = not known
  std::vector<Partition> partitions;
  Domain domain;
  std::vector<Link> links;
  Health health;

  // The first link to `peer` (of any kind), or nullptr.
  [[nodiscard]] const Link* link_to(std::string_view peer) const;
  [[nodiscard]] const Partition* find_partition(std::string_view partition_id) const;
  bool operator==(const Accelerator&) const = default;
};

// p09-hal's backends ("cpu_ref", "blas", "fast", "cuda", "opencl") plus "hip"
// (AMD), "fakegpu" (P04's device) and "simulated" (labs' modelled GPUs).
std::span<const std::string_view> known_backends();
bool is_known_backend(std::string_view backend);

// The largest memory an accelerator may report (a CPU "device" can be the
// whole host); anything larger is a unit mistake.
inline constexpr std::uint64_t kMaxMemoryBytes = std::uint64_t{64} << 40;  // 64 TiB
// The fastest link a description may claim, GB/s.
inline constexpr double kMaxLinkGbps = 100'000;

// Application Xids (13, 31, 43, 45, 68, 109: a kernel faulted, the GPU is
// fine) leave it healthy; every other Xid means the device needs attention,
// as NVIDIA's device plugin decides.
bool xid_marks_unhealthy(unsigned xid);
// "Xid <code>": the reason an Xid puts in Health.
std::string xid_reason(unsigned xid);

}  // namespace gpulab::inventory
