#include "caching_alloc/demos.hpp"

#include <stdexcept>
#include <vector>

#include "caching_alloc/caching_allocator.hpp"
#include "caching_alloc/device.hpp"

namespace caching_alloc {

FragmentationResult demo_fragmentation(bool grouped) {
  // Run on the raw Device: through the caching layer an 8 MB request would get
  // a 20 MB segment and the 256 MB geometry would no longer be the lesson.
  constexpr std::uint64_t kBlock = 8 * kMiB;
  constexpr int kBlocks = 32;
  Device dev(256 * kMiB);
  std::vector<std::uint64_t> addrs;
  for (int i = 0; i < kBlocks; ++i) addrs.push_back(*dev.malloc(kBlock));
  // grouped: slots 16..31 are the transient ones; interleaved: every even slot.
  for (int i = 0; i < kBlocks; ++i) {
    const bool transient = grouped ? i >= kBlocks / 2 : i % 2 == 0;
    if (transient) dev.free(addrs[static_cast<std::size_t>(i)]);
  }
  FragmentationResult r;
  r.free_bytes = dev.free_bytes();
  r.largest_hole = dev.largest_hole();
  r.alloc_16mb_ok = dev.malloc(16 * kMiB).has_value();
  return r;
}

ChurnResult demo_churn(int iterations, std::uint64_t bytes) {
  ChurnResult r;
  {
    Device dev(1024 * kMiB);
    for (int i = 0; i < iterations; ++i) {
      const auto a = dev.malloc(bytes);
      if (!a) throw std::runtime_error("demo 2: the raw device ran out of memory");
      dev.free(*a);
    }
    r.raw_mallocs = dev.counters().mallocs;
    r.raw_frees = dev.counters().frees;
  }
  Device dev(1024 * kMiB);
  CachingAllocator alloc(dev);
  for (int i = 0; i < iterations; ++i) {
    auto a = alloc.allocate(bytes, 0);
    if (!a) throw std::runtime_error("demo 2: " + a.error().message);
    alloc.free(a.value().addr);
  }
  // Read before the allocator is destroyed (its destructor returns the segments).
  r.cached_device_mallocs = alloc.stats().device_mallocs;
  r.cached_bin_hits = alloc.stats().bin_hits;
  r.cached_device_frees = alloc.stats().device_frees;
  return r;
}

}  // namespace caching_alloc
