#include "micro_kernel.hpp"

#include <cstring>

namespace fast_backend {
namespace {

typedef float v8 __attribute__((vector_size(32)));
typedef float v16 __attribute__((vector_size(64)));

// One body for every ISA: an MR x (NV vectors of V) tile, instantiated inside
// functions with a target attribute, so GCC turns `acc += b * a` into
// vfmadd231ps on ymm or zmm registers where FMA is enabled (-ffp-contract=fast)
// and into SSE multiply + add otherwise; with MR and NV constants the
// accumulators are named registers, never memory. The C rows are prefetched
// for writing first: with k blocked, every tile of C goes back to L2/L3
// between k blocks, and rows ldc apart (4 KiB for n = 1024) would otherwise
// miss one after another at the store.
template <class V, std::uint64_t MR, std::uint64_t NV>
[[gnu::always_inline]] inline void tile(std::uint64_t kc, const float* a, const float* b, float* c,
                                        std::uint64_t ldc, bool accumulate) {
  constexpr std::uint64_t kLanes = sizeof(V) / sizeof(float), NR = kLanes * NV;
  for (std::uint64_t r = 0; r < MR; ++r)
    for (std::uint64_t line = 0; line < NR; line += 16) __builtin_prefetch(c + r * ldc + line, 1, 3);
  V acc[MR][NV];
  for (std::uint64_t r = 0; r < MR; ++r)
    for (std::uint64_t v = 0; v < NV; ++v) acc[r][v] = V{};
#pragma GCC unroll 4
  for (std::uint64_t p = 0; p < kc; ++p) {
    V bv[NV];
    for (std::uint64_t v = 0; v < NV; ++v) std::memcpy(&bv[v], b + p * NR + v * kLanes, sizeof(V));
    for (std::uint64_t r = 0; r < MR; ++r) {
      const float av = a[p * MR + r];
      for (std::uint64_t v = 0; v < NV; ++v) acc[r][v] += bv[v] * av;
    }
  }
  for (std::uint64_t r = 0; r < MR; ++r) {
    float* row = c + r * ldc;
    for (std::uint64_t v = 0; v < NV; ++v) {
      if (accumulate) {
        V old;
        std::memcpy(&old, row + v * kLanes, sizeof old);
        acc[r][v] += old;
      }
      std::memcpy(row + v * kLanes, &acc[r][v], sizeof(V));
    }
  }
}

__attribute__((target("avx512f"))) void kernel_avx512(std::uint64_t kc, const float* a,
                                                      const float* b, float* c, std::uint64_t ldc,
                                                      bool accumulate) {
  tile<v16, kTileAvx512.mr, kTileAvx512.nr / 16>(kc, a, b, c, ldc, accumulate);
}

__attribute__((target("avx2,fma"))) void kernel_avx2_fma(std::uint64_t kc, const float* a,
                                                         const float* b, float* c,
                                                         std::uint64_t ldc, bool accumulate) {
  tile<v8, kTileAvx2.mr, kTileAvx2.nr / 8>(kc, a, b, c, ldc, accumulate);
}

void kernel_baseline(std::uint64_t kc, const float* a, const float* b, float* c, std::uint64_t ldc,
                     bool accumulate) {
  tile<v8, kTileAvx2.mr, kTileAvx2.nr / 8>(kc, a, b, c, ldc, accumulate);
}

}  // namespace

CpuIsa this_cpu_isa() {
  __builtin_cpu_init();
  // libgcc checks XCR0 too: a feature the OS does not save registers for reads as absent.
  return {__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"),
          __builtin_cpu_supports("avx512f") != 0};
}

KernelChoice kernel_for(Isa isa) {
  switch (isa) {
    case Isa::kAvx512:
      return {kernel_avx512, isa, "AVX-512F", kTileAvx512.mr, kTileAvx512.nr};
    case Isa::kAvx2Fma:
      return {kernel_avx2_fma, isa, "AVX2+FMA", kTileAvx2.mr, kTileAvx2.nr};
    case Isa::kBaseline:
      break;
  }
  return {kernel_baseline, Isa::kBaseline, "baseline x86-64", kTileAvx2.mr, kTileAvx2.nr};
}

bool choose_isa(const char* request, const CpuIsa& cpu, Isa& isa, std::string& error) {
  const std::string_view want = request != nullptr ? request : "";
  if (want.empty()) {
    isa = cpu.avx512f ? Isa::kAvx512 : cpu.avx2_fma ? Isa::kAvx2Fma : Isa::kBaseline;
    return true;
  }
  if (want == "baseline") {
    isa = Isa::kBaseline;
    return true;
  }
  if (want == "avx2") {
    if (!cpu.avx2_fma) {
      error = "GPULAB_HAL_FAST_ISA=avx2: this CPU has no AVX2+FMA";
      return false;
    }
    isa = Isa::kAvx2Fma;
    return true;
  }
  if (want == "avx512") {
    if (!cpu.avx512f) {
      error = "GPULAB_HAL_FAST_ISA=avx512: this CPU has no AVX-512F";
      return false;
    }
    isa = Isa::kAvx512;
    return true;
  }
  error = "GPULAB_HAL_FAST_ISA='" + std::string(want) + "': expected avx512, avx2 or baseline";
  return false;
}

}  // namespace fast_backend
