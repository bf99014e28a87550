// The two kernels placed on this machine's roofline: vector_add (AI 1/12)
// and a blocked FP32 matmul (AI b/6 for block b), timed on the worker pool.
#pragma once

#include <cstddef>

#include "membench/worker_pool.hpp"

namespace membench {

struct KernelTiming {
  double gflops = 0;  // best repetition
  double seconds = 0;
  bool correct = false;  // the result was checked against a reference
};

// c = a + b over n floats (one FLOP per element).
KernelTiming time_vector_add(WorkerPool& pool, std::size_t n, int reps);
// C = A x B, N x N (N a multiple of block), blocked in b x b tiles; 2 N^3 FLOPs.
// Rows of blocks are split over the workers. Checks sampled entries of C.
KernelTiming time_blocked_matmul(WorkerPool& pool, int n, int block, int reps);

}  // namespace membench
