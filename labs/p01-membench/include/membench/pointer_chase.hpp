// Latency by pointer chasing: one pointer per 64-byte line, the lines linked
// into a single cycle in random order (Sattolo's algorithm), so every load's
// address comes from the previous load and neither the out-of-order core nor
// the prefetcher can run ahead.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "gpulab/rng.hpp"

namespace membench {

// next[i] is the node that follows node i. Sattolo's variant of Fisher–Yates
// yields a uniformly random permutation that is one cycle through all n nodes
// (plain Fisher–Yates would leave short cycles the chase gets stuck in).
std::vector<std::uint32_t> sattolo_cycle(std::size_t n, gpulab::Rng& rng);
// The identity chain i -> i+1 (mod n): the `--sequential` pitfall, which a
// next-line prefetcher turns into a streaming read.
std::vector<std::uint32_t> sequential_cycle(std::size_t n);
// Steps from node 0 until it comes back (n for a single full cycle); stops
// after next.size() steps, so a broken permutation cannot loop forever.
std::size_t cycle_length_from_zero(std::span<const std::uint32_t> next);

// A page-aligned buffer of cache-line nodes linked in the order `next` gives.
class ChaseBuffer {
 public:
  // `huge_pages` asks the kernel for transparent huge pages so DRAM latency
  // is not inflated by a page walk on every load.
  ChaseBuffer(std::span<const std::uint32_t> next, bool huge_pages);
  [[nodiscard]] const void* head() const { return mem_.get(); }
  [[nodiscard]] std::size_t nodes() const { return nodes_; }
  [[nodiscard]] std::size_t bytes() const { return nodes_ * 64; }

 private:
  struct Free {
    void operator()(void* p) const noexcept;
  };
  std::unique_ptr<void, Free> mem_;
  std::size_t nodes_ = 0;
};

// Follows `loads` dependent pointers from `start` and returns where it ended
// (callers feed it to a volatile sink so the loop cannot be deleted).
const void* chase(const void* start, std::size_t loads);

struct ChaseOptions {
  std::size_t loads = 10'000'000;  // dependent loads per repetition
  int reps = 3;                    // measured repetitions; the minimum is reported
  bool sequential = false;
  bool huge_pages = true;
  std::uint64_t seed = 1;
};

// Timed on the thread's CPU clock (gpulab/timing.hpp); the wall-clock minimum is
// kept beside it, and on an idle machine the two agree.
struct ChaseTiming {
  double ns_min = 0;       // best repetition, ns per load (thread CPU time)
  double ns_median = 0;    // median repetition: how noisy the machine was
  double wall_ns_min = 0;  // best repetition by the wall clock
};

// Builds the chain for `bytes` and times it (one unmeasured warm-up pass).
ChaseTiming time_chase(std::size_t bytes, const ChaseOptions& opts);
// Same, on an existing buffer (the bench and the counters reuse it).
ChaseTiming time_chase(const ChaseBuffer& buffer, const ChaseOptions& opts);

}  // namespace membench
