// The register-blocked micro-kernel of the fast backend's GEMM: one MR x NR
// tile of C from an MR-row sliver of packed A and an NR-column sliver of
// packed B. The ISA is picked once, at run time, so one .so runs on any
// x86-64 and uses AVX2+FMA where the CPU has them.
#pragma once

#include <cstdint>

namespace fast_backend {

// 6 x 16: twelve 8-float accumulators plus two B vectors and one broadcast A
// value are 15 of the 16 ymm registers; each k step is 12 FMAs against 8
// loads, so the two FMA pipes, not the load ports, set the pace.
inline constexpr std::uint64_t kMR = 6;
inline constexpr std::uint64_t kNR = 16;

// C[0:MR, 0:NR] (row stride ldc) = (accumulate ? C : 0) + a * b over kc, where
// a holds MR floats per k and b NR floats per k (both packed, b 64-byte aligned).
using MicroKernel = void (*)(std::uint64_t kc, const float* a, const float* b, float* c,
                             std::uint64_t ldc, bool accumulate);

struct KernelChoice {
  MicroKernel kernel;
  const char* isa;  // "AVX2+FMA" or "baseline x86-64"
};

// The best kernel this CPU runs (__builtin_cpu_supports).
KernelChoice pick_micro_kernel();

}  // namespace fast_backend
