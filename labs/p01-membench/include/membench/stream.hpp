// Bandwidth the way STREAM (McCalpin) measures it: copy, scale, add and
// triad over double arrays, plus a read-only sum and a write-only fill.
// STREAM's rules: each array at least 4x the last-level cache, every kernel
// repeated NTIMES with the first iteration dropped, the best rate reported,
// bytes counted as the program asks for them (no write-allocate traffic),
// decimal GB/s (1e9), and the arrays' final contents checked.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "membench/worker_pool.hpp"

namespace membench {

enum class StreamKernel { kCopy, kScale, kAdd, kTriad, kRead, kWrite };
inline constexpr StreamKernel kAllStreamKernels[] = {StreamKernel::kCopy, StreamKernel::kScale,
                                                     StreamKernel::kAdd,  StreamKernel::kTriad,
                                                     StreamKernel::kRead, StreamKernel::kWrite};

const char* name(StreamKernel k);
// Bytes one pass over n elements is credited with: copy/scale 16n, add/triad
// 24n, read/write 8n. A write costs 8 bytes, not the 16 that write-allocate
// really moves on a cache that reads a line before writing it.
std::size_t stream_bytes(StreamKernel k, std::size_t n);

struct StreamConfig {
  std::size_t elements = 0;  // per array (doubles)
  int ntimes = 10;           // STREAM's NTIMES; the first is dropped (>= 2)
};

struct StreamRate {
  StreamKernel kernel{};
  double best_gbs = 0;  // bytes / min time (STREAM's "Best Rate")
  double avg_s = 0, min_s = 0, max_s = 0;
};

struct StreamResult {
  int threads = 1;
  std::size_t elements = 0;
  std::vector<StreamRate> rates;  // in kAllStreamKernels order
  bool valid = false;             // the arrays hold what the kernels should have left
  std::string validation;         // STREAM-style one-line verdict
  [[nodiscard]] const StreamRate& rate(StreamKernel k) const;
};

// Allocates three arrays, first-touches each worker's slice on that worker
// (so pages land near it), runs the kernels and validates.
StreamResult run_stream(WorkerPool& pool, const StreamConfig& cfg);

// Elements per array that satisfy STREAM's rule for a last-level cache of
// `llc_bytes` (4x, at least 10 M elements as STREAM's default).
std::size_t stream_elements_for(std::size_t llc_bytes);

}  // namespace membench
