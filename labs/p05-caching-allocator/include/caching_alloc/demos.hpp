// The curriculum's two teaching demos, as functions that return what they
// measured (main.cpp prints them; the tests check them).
#pragma once

#include <cstdint>

namespace caching_alloc {

// Demo 1: the same 128 MB is free in both layouts; only its shape differs.
struct FragmentationResult {
  std::uint64_t free_bytes = 0;
  std::uint64_t largest_hole = 0;
  bool alloc_16mb_ok = false;
};
// A raw 256 MB Device filled with 32 blocks of 8 MB; the 16 transient ones are
// freed. interleaved: transients at every other slot; grouped: all after the
// 16 permanent ones.
FragmentationResult demo_fragmentation(bool grouped);

// Demo 2: `iterations` x (alloc `bytes`; free) on one stream.
struct ChurnResult {
  std::uint64_t raw_mallocs = 0;
  std::uint64_t raw_frees = 0;
  std::uint64_t cached_device_mallocs = 0;
  std::uint64_t cached_bin_hits = 0;
  std::uint64_t cached_device_frees = 0;
};
ChurnResult demo_churn(int iterations, std::uint64_t bytes);

}  // namespace caching_alloc
