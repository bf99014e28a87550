// The register-blocked micro-kernels of the fast backend's GEMM: one MR x NR
// tile of C from an MR-row sliver of packed A and an NR-column sliver of
// packed B. One kernel per ISA, its tile shaped to that ISA's register file;
// the ISA is picked once, at run time, so one .so runs on any x86-64 and uses
// AVX-512 or AVX2+FMA where the CPU has them.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace fast_backend {

// C[0:MR, 0:NR] (row stride ldc) = (accumulate ? C : 0) + a * b over kc, where
// a holds MR floats per k and b NR floats per k (both packed, b 64-byte aligned).
using MicroKernel = void (*)(std::uint64_t kc, const float* a, const float* b, float* c,
                             std::uint64_t ldc, bool accumulate);

enum class Isa : std::uint8_t { kBaseline, kAvx2Fma, kAvx512 };

struct KernelChoice {
  MicroKernel kernel;
  Isa isa;
  const char* isa_name;  // "AVX-512F", "AVX2+FMA" or "baseline x86-64"
  std::uint64_t mr, nr;  // the tile
};

// The tiles. AVX2 (16 ymm): 6 x 16 is twelve 8-float accumulators, two B
// vectors and one broadcast of A — 15 registers; 12 FMAs against 8 loads per
// k step, so the two FMA pipes, not the load ports, set the pace. AVX-512 (32
// zmm): 12 x 32 is twenty-four 16-float accumulators, two B vectors and the A
// broadcasts (BLIS's sgemm tile for Skylake-X, turned for row-major C): 24
// FMAs against 14 loads per k step, four times the floats per step of AVX2.
struct Tile {
  std::uint64_t mr, nr;
};
inline constexpr Tile kTileAvx2{6, 16};  // the baseline kernel uses it too (SSE: 4 xmm per row)
inline constexpr Tile kTileAvx512{12, 32};
// The largest of them: the edge scratch tile and the packing's row pointers
// are sized by these.
inline constexpr std::uint64_t kMaxMR = kTileAvx512.mr > kTileAvx2.mr ? kTileAvx512.mr : kTileAvx2.mr;
inline constexpr std::uint64_t kMaxNR = kTileAvx512.nr > kTileAvx2.nr ? kTileAvx512.nr : kTileAvx2.nr;

// What this CPU (and its OS, which must save the wider registers) can run.
struct CpuIsa {
  bool avx2_fma = false;
  bool avx512f = false;
};
CpuIsa this_cpu_isa();  // __builtin_cpu_supports

// The kernel of one ISA (its tile, its name).
KernelChoice kernel_for(Isa isa);

// The ISA for `request` (the value of GPULAB_HAL_FAST_ISA, empty or null when
// unset: the best the CPU runs): "avx512", "avx2" or "baseline". On a request
// the CPU cannot run, or an unknown name, false and `error` says why.
bool choose_isa(const char* request, const CpuIsa& cpu, Isa& isa, std::string& error);

}  // namespace fast_backend
