#include "gemm.hpp"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <vector>

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <climits>

extern "C" {
#include <gpulab_hal/gpulab_hal.h>
}

namespace fast_backend {
namespace {

// The wait on a packed B group. std::atomic::wait would do the same futex calls, but it brings
// libstdc++'s waiter pool into this .so as a GNU unique symbol that the dynamic symbol table must
// export, and a backend exports only its registration function (hal.ElfFacts).
static_assert(sizeof(std::atomic<std::uint32_t>) == sizeof(std::uint32_t));
void futex_wait(std::atomic<std::uint32_t>& word, std::uint32_t expected) {
  syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), FUTEX_WAIT_PRIVATE, expected,
          nullptr, nullptr, 0);
}
void futex_wake_all(std::atomic<std::uint32_t>& word) {
  syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), FUTEX_WAKE_PRIVATE, INT_MAX,
          nullptr, nullptr, 0);
}

float load(const Matrix& x, std::uint64_t r, std::uint64_t c) {
  if (!x.is_f16) return static_cast<const float*>(x.data)[r * x.ld + c];
  return gpulab_hal_f16_to_f32(static_cast<const std::uint16_t*>(x.data)[r * x.ld + c]);
}

// A[i0:i0+mc, p0:p0+kc] -> slivers of MR rows, each k-major (MR floats per k),
// the rows past mc zero.
void pack_a(const Matrix& a, std::uint64_t i0, std::uint64_t mc, std::uint64_t p0, std::uint64_t kc,
            std::uint64_t MR, float* out) {
  for (std::uint64_t ir = 0; ir < mc; ir += MR) {
    const std::uint64_t mr = std::min(MR, mc - ir);
    if (!a.is_f16 && mr == MR) {
      // A full F32 sliver: MR row pointers, one store per element, no branch.
      const float* rows[kMaxMR];
      for (std::uint64_t r = 0; r < MR; ++r)
        rows[r] = static_cast<const float*>(a.data) + (i0 + ir + r) * a.ld + p0;
      for (std::uint64_t p = 0; p < kc; ++p)
        for (std::uint64_t r = 0; r < MR; ++r) *out++ = rows[r][p];
      continue;
    }
    for (std::uint64_t p = 0; p < kc; ++p)
      for (std::uint64_t r = 0; r < MR; ++r) *out++ = r < mr ? load(a, i0 + ir + r, p0 + p) : 0.0f;
  }
}

// One row of NR floats into a sliver: a copy of a size known at compile time
// (two or four vector moves), not a call to memcpy.
template <std::uint64_t NR>
void copy_rows(const float* row, std::uint64_t full, std::uint64_t kc, std::uint64_t p, float* out) {
  for (std::uint64_t jr = 0; jr < full; jr += NR) std::memcpy(out + jr * kc + p * NR, row + jr, NR * sizeof(float));
}

// B[p0:p0+kc, j0:j0+nc] -> slivers of NR columns, each k-major (NR floats per
// k), the columns past nc zero. F32 reads B row by row (one contiguous run per
// k, which the prefetcher follows) and scatters it over the slivers; walking
// one sliver down k instead reads NR floats per row of B, a cache miss per row.
void pack_b(const Matrix& b, std::uint64_t p0, std::uint64_t kc, std::uint64_t j0, std::uint64_t nc,
            std::uint64_t NR, float* out) {
  const std::uint64_t full = b.is_f16 ? 0 : nc / NR * NR;  // columns in whole F32 slivers
  if (full > 0) {
    for (std::uint64_t p = 0; p < kc; ++p) {
      const float* row = static_cast<const float*>(b.data) + (p0 + p) * b.ld + j0;
      if (NR == kTileAvx512.nr)
        copy_rows<kTileAvx512.nr>(row, full, kc, p, out);
      else if (NR == kTileAvx2.nr)
        copy_rows<kTileAvx2.nr>(row, full, kc, p, out);
      else
        for (std::uint64_t jr = 0; jr < full; jr += NR) std::memcpy(out + jr * kc + p * NR, row + jr, NR * sizeof(float));
    }
  }
  for (std::uint64_t jr = full; jr < nc; jr += NR) {
    const std::uint64_t nr = std::min(NR, nc - jr);
    float* sliver = out + jr * kc;
    for (std::uint64_t p = 0; p < kc; ++p)
      for (std::uint64_t c = 0; c < NR; ++c)
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

// All of B packed once for threads that split C by rows: every thread needs
// the whole of B, and packing it in each thread packed it once per thread
// (at N = 256 on two threads, a third of all packing). Each kc slice of B is
// cut into groups of slivers; a thread that reaches a slice claims groups from
// the slice's counter and packs them until none is left, then computes,
// waiting only for a group another thread is still packing. No thread waits
// for a group nobody claimed (it claims what is left before it computes), so
// when the pool runs the parts one after another the first packs everything.
class SharedB {
 public:
  // Groups of 64 columns (4 slivers of 16, 2 of 32): long enough runs of each
  // B row for pack_b's row-by-row copy, and several groups to share at N = 256.
  SharedB(const Matrix& b, std::uint64_t k, std::uint64_t n, std::uint64_t kc, std::uint64_t nr)
      : b_(b), k_(k), n_(n), kc_(kc), nr_(nr), group_cols_(std::max<std::uint64_t>(64 / nr, 1) * nr),
        slices_((k + kc - 1) / kc), groups_((n + group_cols_ - 1) / group_cols_),
        panel_(packed(slices_ * kc * ((n + nr - 1) / nr * nr))),
        claimed_(slices_), done_(slices_ * groups_) {}

  [[nodiscard]] bool ok() const { return panel_ != nullptr; }
  [[nodiscard]] std::uint64_t kc() const { return kc_; }

  // Packs unclaimed groups of slice `s` until there are none left.
  void pack_slice(std::uint64_t s) {
    const std::uint64_t pc = s * kc_, kc = std::min(kc_, k_ - pc);
    for (;;) {
      const std::uint64_t g = claimed_[s].fetch_add(1);
      if (g >= groups_) return;
      const std::uint64_t j = g * group_cols_;
      pack_b(b_, pc, kc, j, std::min(group_cols_, n_ - j), nr_, slice(s) + j * kc);
      std::atomic<std::uint32_t>& flag = done_[s * groups_ + g];
      flag.store(1, std::memory_order_release);
      futex_wake_all(flag);
    }
  }

  // Slice `s`, packed as pack_b(b, s * kc, kc, 0, n) lays it out, once the
  // group holding column `j` is packed.
  const float* ready(std::uint64_t s, std::uint64_t j) {
    std::atomic<std::uint32_t>& flag = done_[s * groups_ + j / group_cols_];
    // A short spin (the other thread is usually mid-copy), then a futex wait.
    for (int i = 0; i < 4096 && flag.load(std::memory_order_acquire) == 0; ++i) {
#if defined(__x86_64__) || defined(__i386__)
      __builtin_ia32_pause();
#endif
    }
    while (flag.load(std::memory_order_acquire) == 0) futex_wait(flag, 0);
    return slice(s);
  }

 private:
  [[nodiscard]] float* slice(std::uint64_t s) const {
    return panel_.get() + s * kc_ * ((n_ + nr_ - 1) / nr_ * nr_);
  }

  const Matrix& b_;
  std::uint64_t k_, n_, kc_, nr_, group_cols_, slices_, groups_;
  Packed panel_;
  std::vector<std::atomic<std::uint64_t>> claimed_;  // per slice: the next group to claim
  std::vector<std::atomic<std::uint32_t>> done_;     // per slice and group: packed
};

// One thread's share: C[i0:i1, j0:j1] over the whole of k. It packs the A
// blocks of its rows itself; B comes packed from `shared` (all of B, shared by
// the threads of a split by rows), or the thread packs the B panel of its
// columns into a buffer of its own (no waiting on another thread at all).
bool gemm_block(const GemmEngine& e, const Matrix& a, const Matrix& b, std::uint64_t k,
                std::uint64_t i0, std::uint64_t i1, std::uint64_t j0, std::uint64_t j1, float* c,
                std::uint64_t ldc, SharedB* shared) {
  if (i1 <= i0 || j1 <= j0) return true;
  if (k == 0) {
    for (std::uint64_t i = i0; i < i1; ++i) std::fill(c + i * ldc + j0, c + i * ldc + j1, 0.0f);
    return true;
  }
  // The blocking's sizes are upper bounds; equal blocks of about that size
  // (256 rows with mc 252 as two blocks of 128, not 252 + 4) keep the last
  // block from being a thin one that pays a full pass over the B panel.
  const std::uint64_t MR = e.kernel.mr, NR = e.kernel.nr;
  const Blocking bl{shared != nullptr ? shared->kc() : balanced(k, e.blocking.kc, 1),
                    balanced(i1 - i0, e.blocking.mc, MR),
                    shared != nullptr ? j1 - j0 : balanced(j1 - j0, e.blocking.nc, NR)};
  Packed bp = shared != nullptr ? nullptr : packed(bl.kc * bl.nc), ap = packed(bl.kc * bl.mc);
  if ((shared == nullptr && !bp) || !ap) return false;
  alignas(64) float edge[kMaxMR * kMaxNR];
  const MicroKernel kernel = e.kernel.kernel;
  for (std::uint64_t jc = j0; jc < j1; jc += bl.nc) {
    const std::uint64_t nc = std::min(bl.nc, j1 - jc);
    for (std::uint64_t pc = 0; pc < k; pc += bl.kc) {
      const std::uint64_t kc = std::min(bl.kc, k - pc);
      const bool accumulate = pc > 0;
      const std::uint64_t slice = pc / bl.kc;
      if (shared != nullptr) {
        shared->pack_slice(slice);
      } else {
        pack_b(b, pc, kc, jc, nc, NR, bp.get());
      }
      for (std::uint64_t ic = i0; ic < i1; ic += bl.mc) {
        const std::uint64_t mc = std::min(bl.mc, i1 - ic);
        pack_a(a, ic, mc, pc, kc, MR, ap.get());
        for (std::uint64_t jr = 0; jr < nc; jr += NR) {
          const std::uint64_t nr = std::min(NR, nc - jr);
          const float* b_sliver = (shared != nullptr ? shared->ready(slice, jr) : bp.get()) + jr * kc;
          for (std::uint64_t ir = 0; ir < mc; ir += MR) {
            const std::uint64_t mr = std::min(MR, mc - ir);
            const float* a_sliver = ap.get() + ir * kc;
            float* tile = c + (ic + ir) * ldc + jc + jr;
            if (mr == MR && nr == NR) {
              kernel(kc, a_sliver, b_sliver, tile, ldc, accumulate);
              continue;
            }
            // Edge tile: the kernel works on a full-size scratch tile, and only
            // the mr x nr part inside C is read and written.
            for (std::uint64_t r = 0; r < mr; ++r)
              for (std::uint64_t col = 0; col < nr; ++col)
                edge[r * NR + col] = accumulate ? tile[r * ldc + col] : 0.0f;
            kernel(kc, a_sliver, b_sliver, edge, NR, accumulate);
            for (std::uint64_t r = 0; r < mr; ++r)
              for (std::uint64_t col = 0; col < nr; ++col)
                tile[r * ldc + col] = edge[r * NR + col];
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
  const std::uint64_t unit = split_rows ? e.kernel.mr : e.kernel.nr;
  const std::uint64_t units = ((split_rows ? m : n) + unit - 1) / unit;
  const auto by_work = static_cast<std::uint64_t>(std::max(1.0, flops / 4e6));
  const auto parts =
      static_cast<unsigned>(std::min<std::uint64_t>({e.pool->size(), by_work, units}));
  // Threads that split C by rows all read the whole of B: pack it once for
  // all of them when it is one panel wide (n <= nc; wider B is packed panel by
  // panel in each thread, as on one thread).
  std::optional<SharedB> shared;
  if (split_rows && parts > 1 && k > 0 && n <= e.blocking.nc) {
    shared.emplace(b, k, n, balanced(k, e.blocking.kc, 1), e.kernel.nr);
    if (!shared->ok()) return false;
  }
  std::atomic<bool> ok{true};
  e.pool->run(parts, [&](unsigned t) {
    const std::uint64_t extent = split_rows ? m : n;
    const std::uint64_t lo = std::min(extent, units * t / parts * unit);
    const std::uint64_t hi = std::min(extent, units * (t + 1) / parts * unit);
    SharedB* const sb = shared ? &*shared : nullptr;
    const bool done = split_rows ? gemm_block(e, a, b, k, lo, hi, 0, n, c, n, sb)
                                 : gemm_block(e, a, b, k, 0, m, lo, hi, c, n, nullptr);
    if (!done) ok.store(false);
  });
  return ok.load();
}

}  // namespace fast_backend
