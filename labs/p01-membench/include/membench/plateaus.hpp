// Plateaus read off the latency curve itself, and how they compare with the
// cache sizes the machine reports: the two should agree to within one sweep
// step; when they do not, the report says where (a VM that hides its real
// L3, an inclusive cache, a TLB step mistaken for a cache).
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "membench/cache_topology.hpp"

namespace membench {

struct Plateau {
  std::size_t first_bytes = 0;  // smallest buffer on the plateau
  std::size_t last_bytes =
      0;          // largest buffer before the next cliff: the level's apparent capacity
  double ns = 0;  // median latency of the plateau's points
};

// A cliff is a run of consecutive steps whose latency grows by at least
// `rise` (1.25 = +25 %) per step; the points between cliffs form plateaus.
// sizes ascending, same length as ns.
std::vector<Plateau> detect_plateaus(std::span<const std::size_t> sizes, std::span<const double> ns,
                                     double rise = 1.25);

struct LevelComparison {
  std::string level;  // "L1", "L2", ...
  std::size_t sysfs_bytes = 0;
  std::size_t curve_bytes = 0;  // 0: the curve shows no cliff for this level
  bool agree = false;           // within a factor of two (one power-of-two step)
  std::string note;             // one line for the report
};

// Matches the i-th cliff to the i-th cache level. Cliffs beyond the last level
// (a TLB reach, a NUMA step) are reported with level "extra".
std::vector<LevelComparison> compare_plateaus(const CacheTopology& topo,
                                              std::span<const Plateau> plateaus);

}  // namespace membench
