#include "micro_kernel.hpp"

#include <cstring>

namespace fast_backend {
namespace {

typedef float v8 __attribute__((vector_size(32)));

// One body, compiled twice by the target attribute: GCC turns `c += va * b`
// into vfmadd231ps where FMA is enabled (-ffp-contract=fast) and into SSE
// multiply + add otherwise. The C rows are prefetched for writing first: with
// k blocked, every tile of C goes back to L2/L3 between k blocks, and rows
// ldc apart (4 KiB for n = 1024) would otherwise miss one after another at
// the store.
#define FAST_MICRO_KERNEL_BODY                                          \
  for (std::uint64_t r = 0; r < kMR; ++r) {                             \
    __builtin_prefetch(c + r * ldc, 1, 3);                              \
    __builtin_prefetch(c + r * ldc + kNR - 1, 1, 3);                    \
  }                                                                     \
  v8 acc[kMR][2];                                                       \
  for (std::uint64_t r = 0; r < kMR; ++r) acc[r][0] = acc[r][1] = v8{}; \
  _Pragma("GCC unroll 4") for (std::uint64_t p = 0; p < kc; ++p) {      \
    v8 b0, b1;                                                          \
    std::memcpy(&b0, b + p * kNR, sizeof b0);                           \
    std::memcpy(&b1, b + p * kNR + 8, sizeof b1);                       \
    for (std::uint64_t r = 0; r < kMR; ++r) {                           \
      const float av = a[p * kMR + r];                                  \
      const v8 va = {av, av, av, av, av, av, av, av};                   \
      acc[r][0] += va * b0;                                             \
      acc[r][1] += va * b1;                                             \
    }                                                                   \
  }                                                                     \
  for (std::uint64_t r = 0; r < kMR; ++r) {                             \
    float* row = c + r * ldc;                                           \
    if (accumulate) {                                                   \
      v8 old0, old1;                                                    \
      std::memcpy(&old0, row, sizeof old0);                             \
      std::memcpy(&old1, row + 8, sizeof old1);                         \
      acc[r][0] += old0;                                                \
      acc[r][1] += old1;                                                \
    }                                                                   \
    std::memcpy(row, &acc[r][0], sizeof acc[r][0]);                     \
    std::memcpy(row + 8, &acc[r][1], sizeof acc[r][1]);                 \
  }

__attribute__((target("avx2,fma"))) void kernel_avx2_fma(std::uint64_t kc, const float* a,
                                                         const float* b, float* c,
                                                         std::uint64_t ldc, bool accumulate) {
  FAST_MICRO_KERNEL_BODY
}

void kernel_baseline(std::uint64_t kc, const float* a, const float* b, float* c, std::uint64_t ldc,
                     bool accumulate) {
  FAST_MICRO_KERNEL_BODY
}

}  // namespace

KernelChoice pick_micro_kernel() {
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    return {kernel_avx2_fma, "AVX2+FMA"};
  return {kernel_baseline, "baseline x86-64"};
}

}  // namespace fast_backend
