// Extension 2: data-parallel gradient bucketing. Backward produces gradients
// bucket by bucket (last layer first); each bucket is all-reduced as soon as
// it is ready while the next one is still being computed, as PyTorch DDP does.
// Backward compute is simulated by sleeping: on a GPU it runs on the device,
// leaving the CPU free to drive the sockets, and a sleep leaves it free too.
#pragma once

#include <cstddef>

#include "ring_allreduce/launcher.hpp"
#include "ring_allreduce/wire.hpp"

namespace ring {

struct OverlapSpec {
  std::size_t count = 80'000;  // gradient elements per rank
  int buckets = 8;
  double compute_ms = 5.0;     // backward compute per bucket
  int reps = 5;                // each schedule is timed this often; the fastest counts
  DType dtype = DType::kF64;
};
RankJob overlap_job(const OverlapSpec& spec);

struct OverlapResult {  // seconds, slowest rank
  double compute = 0;     // backward alone
  double comm = 0;        // all buckets' all-reduces alone
  double sequential = 0;  // backward, then all-reduce (no overlap), measured
  double overlapped = 0;  // all-reduce of bucket k during the compute of bucket k+1, measured
  std::uint64_t wrong = 0;
  // Communication time that disappeared behind compute.
  [[nodiscard]] double hidden() const { return sequential - overlapped; }
  // ... as a fraction of what could be hidden at best (the shorter of the two).
  [[nodiscard]] double hidden_fraction() const;
};
OverlapResult fold_overlap(const std::vector<RankOutcome>& ranks);

}  // namespace ring
