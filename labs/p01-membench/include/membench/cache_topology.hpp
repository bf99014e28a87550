// The machine's own description of its data caches, read from Linux sysfs
// (/sys/devices/system/cpu/cpu0/cache/index*/{level,type,size,...}), and the
// level a buffer of a given size should live in.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace membench {

struct CacheLevel {
  int level = 0;            // 1, 2, 3 ...
  std::size_t size = 0;     // bytes, as seen by one CPU (one instance)
  std::size_t line = 64;    // coherency_line_size
  std::string shared_with;  // shared_cpu_list, e.g. "0-1"
};

struct CacheTopology {
  std::vector<CacheLevel> data_levels;  // Data and Unified caches only, by level
  std::string source;                   // the directory read, or why nothing was

  [[nodiscard]] bool empty() const { return data_levels.empty(); }
  // Size of the last level (0 when unknown).
  [[nodiscard]] std::size_t last_level_size() const;
  // "L1", "L2", "L3" for the smallest level that holds `bytes`; "DRAM" past the last.
  [[nodiscard]] std::string label_for(std::size_t bytes) const;
};

inline constexpr const char* kSysfsCacheDir = "/sys/devices/system/cpu/cpu0/cache";

// Reads index*/ under `dir`. Missing or unreadable entries are skipped; an
// absent directory gives an empty topology whose `source` says why.
CacheTopology read_cache_topology(const std::string& dir = kSysfsCacheDir);

}  // namespace membench
