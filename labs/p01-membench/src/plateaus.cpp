#include "membench/plateaus.hpp"

#include <fmt/core.h>

#include <algorithm>

#include "gpulab/stats.hpp"
#include "membench/sizes.hpp"

namespace membench {

std::vector<Plateau> detect_plateaus(std::span<const std::size_t> sizes, std::span<const double> ns,
                                     double rise) {
  std::vector<Plateau> out;
  const std::size_t n = std::min(sizes.size(), ns.size());
  if (n == 0) return out;
  std::vector<double> points;
  std::size_t first = 0;
  const auto close = [&](std::size_t last) {
    points.assign(ns.begin() + static_cast<std::ptrdiff_t>(first),
                  ns.begin() + static_cast<std::ptrdiff_t>(last) + 1);
    out.push_back({sizes[first], sizes[last], gpulab::median(points)});
  };
  std::size_t i = 0;
  while (i + 1 < n) {
    if (ns[i] > 0 && ns[i + 1] / ns[i] >= rise) {
      close(i);  // the plateau ends at the last size before the climb
      while (i + 1 < n && ns[i] > 0 && ns[i + 1] / ns[i] >= rise)
        ++i;  // the whole climb is one cliff
      first = i;
      continue;
    }
    ++i;
  }
  close(n - 1);
  return out;
}

std::vector<LevelComparison> compare_plateaus(const CacheTopology& topo,
                                              std::span<const Plateau> plateaus) {
  std::vector<LevelComparison> out;
  // Every plateau but the last ends at a cliff: that size is a level's apparent capacity.
  const std::size_t cliffs = plateaus.empty() ? 0 : plateaus.size() - 1;
  const std::size_t rows = std::max(cliffs, topo.data_levels.size());
  for (std::size_t i = 0; i < rows; ++i) {
    LevelComparison c;
    if (i < topo.data_levels.size()) {
      c.level = fmt::format("L{}", topo.data_levels[i].level);
      c.sysfs_bytes = topo.data_levels[i].size;
    } else {
      c.level = "extra";
    }
    if (i < cliffs) c.curve_bytes = plateaus[i].last_bytes;
    if (c.sysfs_bytes && c.curve_bytes) {
      c.agree = c.curve_bytes * 2 >= c.sysfs_bytes && c.curve_bytes <= c.sysfs_bytes * 2;
      c.note = c.agree ? "agree (within one step)"
                       : fmt::format("disagree: the curve climbs after {}, sysfs says {}",
                                     format_size(c.curve_bytes), format_size(c.sysfs_bytes));
    } else if (c.sysfs_bytes) {
      c.note =
          "disagree: no cliff in the curve for this level (sweep range, or a level the chase "
          "cannot see)";
    } else {
      c.note = fmt::format("disagree: a cliff after {} that sysfs lists no cache for (TLB reach?)",
                           format_size(c.curve_bytes));
    }
    out.push_back(c);
  }
  return out;
}

}  // namespace membench
