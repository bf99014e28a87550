#include "gemm.hpp"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <memory>

extern "C" {
#include <gpulab_hal/gpulab_hal.h>
}

namespace fast_backend {
namespace {

float load(const Matrix& x, std::uint64_t r, std::uint64_t c) {
  if (!x.is_f16) return static_cast<const float*>(x.data)[r * x.ld + c];
  return gpulab_hal_f16_to_f32(static_cast<const std::uint16_t*>(x.data)[r * x.ld + c]);
}

// A[i0:i0+mc, p0:p0+kc] -> slivers of MR rows, each k-major (MR floats per k),
// the rows past mc zero.
void pack_a(const Matrix& a, std::uint64_t i0, std::uint64_t mc, std::uint64_t p0, std::uint64_t kc,
            float* out) {
  for (std::uint64_t ir = 0; ir < mc; ir += kMR) {
    const std::uint64_t mr = std::min(kMR, mc - ir);
    if (!a.is_f16 && mr == kMR) {
      // A full F32 sliver: six row pointers, one store per element, no branch.
      const float* rows[kMR];
      for (std::uint64_t r = 0; r < kMR; ++r)
        rows[r] = static_cast<const float*>(a.data) + (i0 + ir + r) * a.ld + p0;
      for (std::uint64_t p = 0; p < kc; ++p)
        for (std::uint64_t r = 0; r < kMR; ++r) *out++ = rows[r][p];
      continue;
    }
    for (std::uint64_t p = 0; p < kc; ++p)
      for (std::uint64_t r = 0; r < kMR; ++r) *out++ = r < mr ? load(a, i0 + ir + r, p0 + p) : 0.0f;
  }
}

// B[p0:p0+kc, j0:j0+nc] -> slivers of NR columns, each k-major (NR floats per
// k), the columns past nc zero. F32 reads B row by row (one contiguous run per
// k, which the prefetcher follows) and scatters it over the slivers; walking
// one sliver down k instead reads 64 bytes per row of B, a cache miss per row.
void pack_b(const Matrix& b, std::uint64_t p0, std::uint64_t kc, std::uint64_t j0, std::uint64_t nc,
            float* out) {
  const std::uint64_t full = b.is_f16 ? 0 : nc / kNR * kNR;  // columns in whole F32 slivers
  if (full > 0) {
    for (std::uint64_t p = 0; p < kc; ++p) {
      const float* row = static_cast<const float*>(b.data) + (p0 + p) * b.ld + j0;
      for (std::uint64_t jr = 0; jr < full; jr += kNR)
        std::memcpy(out + jr * kc + p * kNR, row + jr, kNR * sizeof(float));
    }
  }
  for (std::uint64_t jr = full; jr < nc; jr += kNR) {
    const std::uint64_t nr = std::min(kNR, nc - jr);
    float* sliver = out + jr * kc;
    for (std::uint64_t p = 0; p < kc; ++p)
      for (std::uint64_t c = 0; c < kNR; ++c)
        *sliver++ = c < nr ? load(b, p0 + p, j0 + jr + c) : 0.0f;
  }
}

// The size of each of ceil(extent / most) equal blocks, rounded up to `unit`.
std::uint64_t balanced(std::uint64_t extent, std::uint64_t most, std::uint64_t unit) {
  const std::uint64_t blocks = (extent + most - 1) / most;
  const std::uint64_t each = (extent + blocks - 1) / blocks;
  return (each + unit - 1) / unit * unit;
}

struct FreeDeleter {
  void operator()(float* p) const { std::free(p); }
};
using Packed = std::unique_ptr<float[], FreeDeleter>;

Packed packed(std::uint64_t floats) {
  const std::uint64_t bytes = (floats * sizeof(float) + 63) / 64 * 64;
  return Packed(static_cast<float*>(std::aligned_alloc(64, bytes)));
}

// One thread's share: C[i0:i1, j0:j1] over the whole of k, with its own
// packing buffers (each thread packs the B panel of its columns and the A
// blocks of its rows: no barrier between threads).
bool gemm_block(const GemmEngine& e, const Matrix& a, const Matrix& b, std::uint64_t k,
                std::uint64_t i0, std::uint64_t i1, std::uint64_t j0, std::uint64_t j1, float* c,
                std::uint64_t ldc) {
  if (i1 <= i0 || j1 <= j0) return true;
  if (k == 0) {
    for (std::uint64_t i = i0; i < i1; ++i) std::fill(c + i * ldc + j0, c + i * ldc + j1, 0.0f);
    return true;
  }
  // The blocking's sizes are upper bounds; equal blocks of about that size
  // (256 rows with mc 252 as two blocks of 128, not 252 + 4) keep the last
  // block from being a thin one that pays a full pass over the B panel.
  const Blocking bl{balanced(k, e.blocking.kc, 1), balanced(i1 - i0, e.blocking.mc, kMR),
                    balanced(j1 - j0, e.blocking.nc, kNR)};
  Packed bp = packed(bl.kc * bl.nc), ap = packed(bl.kc * bl.mc);
  if (!bp || !ap) return false;
  alignas(64) float edge[kMR * kNR];
  const MicroKernel kernel = e.kernel.kernel;
  for (std::uint64_t jc = j0; jc < j1; jc += bl.nc) {
    const std::uint64_t nc = std::min(bl.nc, j1 - jc);
    for (std::uint64_t pc = 0; pc < k; pc += bl.kc) {
      const std::uint64_t kc = std::min(bl.kc, k - pc);
      const bool accumulate = pc > 0;
      pack_b(b, pc, kc, jc, nc, bp.get());
      for (std::uint64_t ic = i0; ic < i1; ic += bl.mc) {
        const std::uint64_t mc = std::min(bl.mc, i1 - ic);
        pack_a(a, ic, mc, pc, kc, ap.get());
        for (std::uint64_t jr = 0; jr < nc; jr += kNR) {
          const std::uint64_t nr = std::min(kNR, nc - jr);
          const float* b_sliver = bp.get() + jr * kc;
          for (std::uint64_t ir = 0; ir < mc; ir += kMR) {
            const std::uint64_t mr = std::min(kMR, mc - ir);
            const float* a_sliver = ap.get() + ir * kc;
            float* tile = c + (ic + ir) * ldc + jc + jr;
            if (mr == kMR && nr == kNR) {
              kernel(kc, a_sliver, b_sliver, tile, ldc, accumulate);
              continue;
            }
            // Edge tile: the kernel works on a full-size scratch tile, and only
            // the mr x nr part inside C is read and written.
            for (std::uint64_t r = 0; r < mr; ++r)
              for (std::uint64_t col = 0; col < nr; ++col)
                edge[r * kNR + col] = accumulate ? tile[r * ldc + col] : 0.0f;
            kernel(kc, a_sliver, b_sliver, edge, kNR, accumulate);
            for (std::uint64_t r = 0; r < mr; ++r)
              for (std::uint64_t col = 0; col < nr; ++col)
                tile[r * ldc + col] = edge[r * kNR + col];
          }
        }
      }
    }
  }
  return true;
}

}  // namespace

bool gemm(const GemmEngine& e, const Matrix& a, const Matrix& b, std::uint64_t m, std::uint64_t n,
          std::uint64_t k, float* c) {
  // At least ~4 MFLOP a thread: below that, waking a worker costs more than it
  // saves. Split the longer side of C into stripes of whole tiles, so only the
  // last stripe has edge tiles.
  const double flops =
      2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
  const bool split_rows = m >= n;
  const std::uint64_t unit = split_rows ? kMR : kNR;
  const std::uint64_t units = ((split_rows ? m : n) + unit - 1) / unit;
  const auto by_work = static_cast<std::uint64_t>(std::max(1.0, flops / 4e6));
  const auto parts =
      static_cast<unsigned>(std::min<std::uint64_t>({e.pool->size(), by_work, units}));
  std::atomic<bool> ok{true};
  e.pool->run(parts, [&](unsigned t) {
    const std::uint64_t extent = split_rows ? m : n;
    const std::uint64_t lo = std::min(extent, units * t / parts * unit);
    const std::uint64_t hi = std::min(extent, units * (t + 1) / parts * unit);
    const bool done = split_rows ? gemm_block(e, a, b, k, lo, hi, 0, n, c, n)
                                 : gemm_block(e, a, b, k, 0, m, lo, hi, c, n);
    if (!done) ok.store(false);
  });
  return ok.load();
}

}  // namespace fast_backend
