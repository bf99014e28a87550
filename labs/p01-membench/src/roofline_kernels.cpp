// Compiled with -O3 (CMakeLists.txt). The hot loops are cloned for x86-64-v4
// (AVX-512), v3 (AVX2+FMA) and the baseline and picked at load time, so the
// kernels use the same vector width the peak measurement does.
#include "membench/roofline_kernels.hpp"

#include <cmath>
#include <cstdint>
#include <vector>

#include "gpulab/timing.hpp"

namespace membench {
namespace {

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && \
    !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
#define MEMBENCH_CLONES \
  __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define MEMBENCH_CLONES
#endif

MEMBENCH_CLONES void add_slice(const float* a, const float* b, float* c, std::size_t lo,
                               std::size_t hi) {
  for (std::size_t i = lo; i < hi; ++i) c[i] = a[i] + b[i];
}

// One row-block of C: for every (kk, jj) tile pair, C[ii.., jj..] += A[ii.., kk..] * B[kk.., jj..].
MEMBENCH_CLONES void matmul_row_block(const float* A, const float* B, float* C, int n, int b,
                                      int ii) {
  const auto N = static_cast<std::size_t>(n);
  for (int kk = 0; kk < n; kk += b)
    for (int jj = 0; jj < n; jj += b)
      for (int i = ii; i < ii + b; ++i) {
        float* crow = C + static_cast<std::size_t>(i) * N + static_cast<std::size_t>(jj);
        for (int k = kk; k < kk + b; ++k) {
          const float aik = A[static_cast<std::size_t>(i) * N + static_cast<std::size_t>(k)];
          const float* brow = B + static_cast<std::size_t>(k) * N + static_cast<std::size_t>(jj);
          for (int j = 0; j < b; ++j) crow[j] += aik * brow[j];
        }
      }
}

float volatile g_sink = 0;

}  // namespace

KernelTiming time_vector_add(WorkerPool& pool, std::size_t n, int reps) {
  std::vector<float> a(n), b(n), c(n);
  const int threads = pool.size();
  pool.run([&](int t) {
    const auto [lo, hi] = slice(n, t, threads);
    for (std::size_t i = lo; i < hi; ++i) {
      a[i] = static_cast<float>(i % 1024);
      b[i] = 0.5f;
      c[i] = 0.0f;
    }
  });
  const auto t = gpulab::time_repeated(
      [&] {
        pool.run([&](int w) {
          const auto [lo, hi] = slice(n, w, threads);
          add_slice(a.data(), b.data(), c.data(), lo, hi);
        });
      },
      1, reps);
  KernelTiming r;
  r.seconds = t.min;
  r.gflops = static_cast<double>(n) / t.min / 1e9;
  r.correct = true;
  for (std::size_t i = 0; i < n; i += 4099)
    if (c[i] != static_cast<float>(i % 1024) + 0.5f) r.correct = false;
  g_sink = c[n / 2];
  return r;
}

KernelTiming time_blocked_matmul(WorkerPool& pool, int n, int block, int reps) {
  const auto N = static_cast<std::size_t>(n);
  std::vector<float> A(N * N), B(N * N), C(N * N);
  // Small integers keep every partial sum exact in FP32, so the check is exact.
  for (std::size_t i = 0; i < N * N; ++i) {
    A[i] = static_cast<float>(static_cast<int>(i % 7) - 3);
    B[i] = static_cast<float>(static_cast<int>(i % 5) - 2);
  }
  const int threads = pool.size();
  const int row_blocks = n / block;
  const auto t = gpulab::time_repeated(
      [&] {
        std::fill(C.begin(), C.end(), 0.0f);
        pool.run([&](int w) {
          for (int rb = w; rb < row_blocks; rb += threads)
            matmul_row_block(A.data(), B.data(), C.data(), n, block, rb * block);
        });
      },
      0, reps);
  KernelTiming r;
  r.seconds = t.min;
  r.gflops = 2.0 * static_cast<double>(N * N * N) / t.min / 1e9;
  r.correct = true;
  for (std::size_t s = 0; s < 64; ++s) {
    const std::size_t i = (s * 7919) % N, j = (s * 104729 + 13) % N;
    double ref = 0;
    for (std::size_t k = 0; k < N; ++k)
      ref += static_cast<double>(A[i * N + k]) * static_cast<double>(B[k * N + j]);
    if (static_cast<double>(C[i * N + j]) != ref) r.correct = false;
  }
  g_sink = C[N + 1];
  return r;
}

}  // namespace membench
