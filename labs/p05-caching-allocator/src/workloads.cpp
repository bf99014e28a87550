#include "caching_alloc/workloads.hpp"

#include <fmt/format.h>

#include <stdexcept>
#include <vector>

#include "gpulab/rng.hpp"

namespace caching_alloc {

FitResult run_fit_workload(const AllocatorConfig& config, bool mixed_sizes, std::uint64_t seed,
                           int steps) {
  Device dev(256 * kMiB);
  CachingAllocator alloc(dev, config);
  gpulab::Rng rng(seed);
  struct Live {
    std::uint64_t addr;
    int dies_at;
  };
  std::vector<Live> live;
  double frag_sum = 0;
  int frag_samples = 0;
  int fits = 0;
  for (int step = 0; step < steps; ++step) {
    // Alternate long- and short-lived blocks: the interleaving of demo 1.
    const bool long_lived = step % 2 == 0;
    const std::uint64_t bytes =
        mixed_sizes ? static_cast<std::uint64_t>(rng.uniform_int(1 * kMiB, 9 * kMiB)) : 8 * kMiB;
    const int life = long_lived ? static_cast<int>(rng.uniform_int(10, 30))
                                : static_cast<int>(rng.uniform_int(1, 6));
    if (auto a = alloc.allocate(bytes, 0)) live.push_back({a.value().addr, step + life});
    for (std::size_t i = 0; i < live.size();) {
      if (live[i].dies_at <= step) {
        alloc.free(live[i].addr);
        live[i] = live.back();
        live.pop_back();
      } else {
        ++i;
      }
    }
    const std::uint64_t cached = alloc.stats().cached_bytes();
    const std::uint64_t largest = alloc.largest_cached_block();
    if (cached > 0) {
      frag_sum += 1.0 - static_cast<double>(largest) / static_cast<double>(cached);
      ++frag_samples;
    }
    if (largest >= 16 * kMiB) ++fits;
  }
  FitResult r;
  r.peak_reserved = alloc.stats().peak_reserved_bytes;
  r.device_mallocs = alloc.stats().device_mallocs;
  r.ooms = alloc.stats().ooms;
  r.allocs = alloc.stats().allocs;
  r.mean_fragmentation = frag_samples > 0 ? frag_sum / frag_samples : 0.0;
  r.fits_16mb = steps > 0 ? static_cast<double>(fits) / steps : 0.0;
  return r;
}

SawtoothResult run_sawtooth(AllocatorConfig base, ReleasePolicy policy, std::uint64_t idle_ticks,
                            int iterations, int burst_every) {
  if (burst_every < 1) throw std::invalid_argument("burst_every must be at least 1");
  Device dev(1024 * kMiB);
  AllocatorConfig cfg = base;
  cfg.release_idle_after = 0;
  if (policy == ReleasePolicy::kIdle) cfg.release_idle_after = idle_ticks;
  CachingAllocator alloc(dev, cfg);
  SawtoothResult r;
  switch (policy) {
    case ReleasePolicy::kNever:
      r.policy = "never";
      break;
    case ReleasePolicy::kEveryIteration:
      r.policy = "empty_cache each iteration";
      break;
    case ReleasePolicy::kIdle:
      r.policy = fmt::format("idle >= {} iterations", idle_ticks);
      break;
  }
  double sum = 0;
  std::vector<std::uint64_t> addrs;
  for (int it = 0; it < iterations; ++it) {
    addrs.clear();
    const auto take = [&](std::uint64_t bytes) {
      auto a = alloc.allocate(bytes, 0);
      if (!a) throw std::runtime_error("sawtooth workload: " + a.error().message);
      addrs.push_back(a.value().addr);
    };
    for (int i = 0; i < 8; ++i) take(6 * kMiB);
    if ((it + 1) % burst_every == 0) {
      for (int i = 0; i < 8; ++i) take(24 * kMiB);
    }
    for (const std::uint64_t a : addrs) alloc.free(a);
    if (policy == ReleasePolicy::kEveryIteration) alloc.empty_cache();
    alloc.tick();
    const double mib =
        static_cast<double>(alloc.stats().reserved_bytes) / static_cast<double>(kMiB);
    r.reserved_mib.push_back(mib);
    sum += mib;
  }
  r.peak_reserved = alloc.stats().peak_reserved_bytes;
  r.mean_reserved_mib = iterations > 0 ? sum / iterations : 0.0;
  r.device_mallocs = alloc.stats().device_mallocs;
  r.device_frees = alloc.stats().device_frees;
  return r;
}

}  // namespace caching_alloc
