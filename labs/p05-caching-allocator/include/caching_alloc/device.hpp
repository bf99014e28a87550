// The driver's view of GPU memory (cudaMalloc/cudaFree): one fixed address
// space, first-fit placement, holes that coalesce on free, and no paging or
// compaction — a live block never moves. Every free is a device-wide sync in
// real CUDA, so the counters are the cost model.
#pragma once

#include <cstdint>
#include <map>
#include <optional>

namespace caching_alloc {

struct DeviceCounters {
  std::uint64_t mallocs = 0;          // successful cudaMalloc calls
  std::uint64_t frees = 0;            // cudaFree calls (each a device synchronisation)
  std::uint64_t malloc_failures = 0;  // cudaMalloc calls that found no hole big enough
};

class Device {
 public:
  explicit Device(std::uint64_t capacity_bytes);

  // First fit: the lowest-addressed hole that is large enough. nullopt = OOM.
  std::optional<std::uint64_t> malloc(std::uint64_t bytes);
  // Throws std::invalid_argument for an address malloc did not return.
  void free(std::uint64_t addr);

  [[nodiscard]] std::uint64_t capacity() const { return capacity_; }
  [[nodiscard]] std::uint64_t used_bytes() const { return used_; }
  [[nodiscard]] std::uint64_t free_bytes() const { return capacity_ - used_; }
  [[nodiscard]] std::uint64_t largest_hole() const;
  [[nodiscard]] std::size_t holes() const { return holes_.size(); }
  [[nodiscard]] const DeviceCounters& counters() const { return counters_; }

 private:
  std::uint64_t capacity_;
  std::uint64_t used_ = 0;
  std::map<std::uint64_t, std::uint64_t> holes_;  // address -> size, never adjacent
  std::map<std::uint64_t, std::uint64_t> live_;   // address -> size
  DeviceCounters counters_;
};

}  // namespace caching_alloc
