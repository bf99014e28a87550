// The fast backend's GEMM: C = A * B for row-major F32 or F16 inputs, written
// as binary32, in the GotoBLAS/BLIS structure (blocking.hpp) around a
// register-blocked micro-kernel (micro_kernel.hpp), split over the worker pool.
#pragma once

#include <cstdint>

#include "blocking.hpp"
#include "micro_kernel.hpp"
#include "worker_pool.hpp"

namespace fast_backend {

// A row-major matrix of F32 (is_f16 false) or F16 elements.
struct Matrix {
  const void* data;
  std::uint64_t ld;  // elements per row
  bool is_f16;
};

struct GemmEngine {
  KernelChoice kernel;
  Blocking blocking;
  WorkerPool* pool;
};

// C[m x n] (row stride n) = A[m x k] * B[k x n], every element written (zeros
// when k = 0). Uses up to pool->size() threads, fewer for small problems.
// Returns false when a packing buffer could not be allocated (C is then
// partly written).
bool gemm(const GemmEngine& engine, const Matrix& a, const Matrix& b, std::uint64_t m,
          std::uint64_t n, std::uint64_t k, float* c);

}  // namespace fast_backend
