// Measurements the extensions ask for, as reusable workloads:
// best-fit vs first-fit bins on the demo-1 shape (extension 4) and the
// reserved-memory sawtooth of the idle-segment release policy (extension 2).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "caching_alloc/caching_allocator.hpp"

namespace caching_alloc {

struct FitResult {
  std::uint64_t peak_reserved = 0;
  std::uint64_t device_mallocs = 0;
  std::uint64_t ooms = 0;
  std::uint64_t allocs = 0;
  // Mean over steps of 1 - largest_cached_block / cached (0 = one clean hole).
  double mean_fragmentation = 0;
  // Fraction of steps at which a 16 MiB request could have been served from the cache.
  double fits_16mb = 0;
};

// Demo 1's shape through the caching allocator: long-lived blocks interleaved
// with short-lived ones on a 256 MiB device. `mixed_sizes` = false uses
// demo 1's uniform 8 MiB blocks; true draws 1-9 MiB sizes from `seed`.
// `config` supplies the fit policy and whether the cache coalesces.
FitResult run_fit_workload(const AllocatorConfig& config, bool mixed_sizes, std::uint64_t seed,
                           int steps);

enum class ReleasePolicy : std::uint8_t { kNever, kEveryIteration, kIdle };

struct SawtoothResult {
  std::string policy;
  std::vector<double> reserved_mib;  // after each iteration
  std::uint64_t peak_reserved = 0;
  double mean_reserved_mib = 0;
  std::uint64_t device_mallocs = 0;
  std::uint64_t device_frees = 0;
};

// A training loop: every iteration allocates and frees 8 x 6 MiB activations;
// every `burst_every`-th iteration also an evaluation burst of 8 x 24 MiB.
// `base` supplies coalescing; the release policy is set from `policy`.
SawtoothResult run_sawtooth(AllocatorConfig base, ReleasePolicy policy, std::uint64_t idle_ticks,
                            int iterations, int burst_every);

}  // namespace caching_alloc
