#include "gpulab/inventory/accelerator.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>

namespace gpulab::inventory {

std::string_view link_kind_name(LinkKind kind) {
  switch (kind) {
    case LinkKind::kNvlink:
      return "nvlink";
    case LinkKind::kPcie:
      return "pcie";
    case LinkKind::kInfiniband:
      return "ib";
    case LinkKind::kEthernet:
      return "ethernet";
  }
  return "?";
}

std::optional<LinkKind> parse_link_kind(std::string_view name) {
  for (LinkKind k :
       {LinkKind::kNvlink, LinkKind::kPcie, LinkKind::kInfiniband, LinkKind::kEthernet}) {
    if (link_kind_name(k) == name) return k;
  }
  return std::nullopt;
}

std::string_view partition_kind_name(PartitionKind kind) {
  switch (kind) {
    case PartitionKind::kMig:
      return "mig";
    case PartitionKind::kTimeSlice:
      return "timeslice";
  }
  return "?";
}

std::optional<PartitionKind> parse_partition_kind(std::string_view name) {
  for (PartitionKind k : {PartitionKind::kMig, PartitionKind::kTimeSlice}) {
    if (partition_kind_name(k) == name) return k;
  }
  return std::nullopt;
}

const Link* Accelerator::link_to(std::string_view peer) const {
  const auto it =
      std::find_if(links.begin(), links.end(), [&](const Link& l) { return l.peer == peer; });
  return it == links.end() ? nullptr : &*it;
}

const Partition* Accelerator::find_partition(std::string_view partition_id) const {
  const auto it = std::find_if(partitions.begin(), partitions.end(),
                               [&](const Partition& p) { return p.id == partition_id; });
  return it == partitions.end() ? nullptr : &*it;
}

std::span<const std::string_view> known_backends() {
  static constexpr std::array<std::string_view, 8> kBackends{
      "cpu_ref", "blas", "fast", "cuda", "opencl", "hip", "fakegpu", "simulated"};
  return kBackends;
}

bool is_known_backend(std::string_view backend) {
  const auto all = known_backends();
  return std::find(all.begin(), all.end(), backend) != all.end();
}

bool xid_marks_unhealthy(unsigned xid) {
  // NVIDIA k8s-device-plugin's default skipped Xids: application errors.
  static constexpr std::array<unsigned, 6> kApplicationXids{13, 31, 43, 45, 68, 109};
  return std::find(kApplicationXids.begin(), kApplicationXids.end(), xid) == kApplicationXids.end();
}

std::string xid_reason(unsigned xid) {
  return fmt::format("Xid {}", xid);
}

}  // namespace gpulab::inventory
