// Byte sizes as people type and read them ("4K", "256MiB") and the buffer
// sizes of a sweep.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "gpulab/expected.hpp"

namespace membench {

// "4096", "4K", "4KiB", "4kb", "256M", "1G" (binary multiples: K = 1024).
gpulab::Expected<std::size_t> parse_size(std::string_view text);

// "4 KiB", "1.5 MiB", "256 MiB": the shortest exact-ish binary unit.
std::string format_size(std::size_t bytes);

// Geometric sweep from min to max (both included when max is on the grid),
// `steps_per_doubling` points per factor of two, rounded to whole cache lines.
std::vector<std::size_t> sweep_sizes(std::size_t min, std::size_t max, int steps_per_doubling);

inline constexpr std::size_t kCacheLine = 64;

}  // namespace membench
