// fast — a CPU backend that tries: cache-blocked GEMM in the BLIS structure
// (pack a KC x NC panel of B and an MC x KC block of A, then a 6x16 register
// micro-kernel), AVX2+FMA when the CPU has them (chosen at run time), and one
// thread per core over stripes of C. F16 is converted to binary32 while
// packing, accumulated in binary32 and rounded once when C is written.
// Written in C++ for std::thread; the ABI surface is still the C descriptor.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

extern "C" {
#include "../common/host_backend.h"
#include "../common/host_layer_ops.h"
}

namespace {

constexpr std::uint32_t kDTypes = GPULAB_HAL_DTYPE_F32 | GPULAB_HAL_DTYPE_F16;
constexpr std::uint64_t MR = 6, NR = 16;     // register tile: 12 vectors of 8 floats
constexpr std::uint64_t KC = 256;            // K slice: a 6 x 256 A sliver + 256 x 16 B sliver fit L1
constexpr std::uint64_t MC = 96;             // A block (MC x KC = 96 KiB) sits in L2
constexpr std::uint64_t NC = 2048;           // B panel (KC x NC = 2 MiB) sits in L3

typedef float v8 __attribute__((vector_size(32)));

// Loads one element of a row-major matrix of F32 or F16 as binary32.
struct Matrix {
  const void* data;
  std::uint64_t ld;  // elements per row
  std::uint32_t dtype;
  float at(std::uint64_t r, std::uint64_t c) const {
    if (dtype == GPULAB_HAL_DTYPE_F32) return static_cast<const float*>(data)[r * ld + c];
    return gpulab_hal_f16_to_f32(static_cast<const std::uint16_t*>(data)[r * ld + c]);
  }
};

// A[i0:i0+mc, p0:p0+kc] -> slivers of MR rows, each stored k-major (MR floats per k), zero-padded.
void pack_a(const Matrix& A, std::uint64_t i0, std::uint64_t mc, std::uint64_t p0, std::uint64_t kc, float* out) {
  for (std::uint64_t ir = 0; ir < mc; ir += MR) {
    const std::uint64_t mr = std::min(MR, mc - ir);
    for (std::uint64_t p = 0; p < kc; ++p) {
      for (std::uint64_t r = 0; r < MR; ++r) *out++ = r < mr ? A.at(i0 + ir + r, p0 + p) : 0.0f;
    }
  }
}

// B[p0:p0+kc, j0:j0+nc] -> slivers of NR columns, each stored k-major (NR floats per k), zero-padded.
void pack_b(const Matrix& B, std::uint64_t p0, std::uint64_t kc, std::uint64_t j0, std::uint64_t nc, float* out) {
  for (std::uint64_t jr = 0; jr < nc; jr += NR) {
    const std::uint64_t nr = std::min(NR, nc - jr);
    for (std::uint64_t p = 0; p < kc; ++p) {
      if (B.dtype == GPULAB_HAL_DTYPE_F32 && nr == NR) {
        std::memcpy(out, static_cast<const float*>(B.data) + (p0 + p) * B.ld + j0 + jr, NR * sizeof(float));
        out += NR;
      } else {
        for (std::uint64_t c = 0; c < NR; ++c) *out++ = c < nr ? B.at(p0 + p, j0 + jr + c) : 0.0f;
      }
    }
  }
}

// C[0:6, 0:16] (+)= a_sliver * b_sliver over kc. The same source compiled twice:
// once for AVX2+FMA, once for the baseline ISA.
#define FAST_MICRO_KERNEL_BODY                                                        \
  v8 c[MR][2];                                                                        \
  for (std::uint64_t r = 0; r < MR; ++r) c[r][0] = c[r][1] = v8{};                   \
  for (std::uint64_t p = 0; p < kc; ++p) {                                            \
    v8 b0, b1;                                                                        \
    std::memcpy(&b0, b + p * NR, sizeof b0);                                          \
    std::memcpy(&b1, b + p * NR + 8, sizeof b1);                                      \
    for (std::uint64_t r = 0; r < MR; ++r) {                                          \
      const float av = a[p * MR + r];                                                 \
      const v8 va = {av, av, av, av, av, av, av, av};                                 \
      c[r][0] += va * b0;                                                             \
      c[r][1] += va * b1;                                                             \
    }                                                                                 \
  }                                                                                   \
  for (std::uint64_t r = 0; r < MR; ++r) {                                            \
    float* row = cout + r * ldc;                                                      \
    if (accumulate) {                                                                 \
      v8 old0, old1;                                                                  \
      std::memcpy(&old0, row, sizeof old0);                                           \
      std::memcpy(&old1, row + 8, sizeof old1);                                       \
      c[r][0] += old0;                                                                \
      c[r][1] += old1;                                                                \
    }                                                                                 \
    std::memcpy(row, &c[r][0], sizeof c[r][0]);                                       \
    std::memcpy(row + 8, &c[r][1], sizeof c[r][1]);                                   \
  }

__attribute__((target("avx2,fma"))) void kernel_avx2(std::uint64_t kc, const float* a, const float* b,
                                                       float* cout, std::uint64_t ldc, bool accumulate) {
  FAST_MICRO_KERNEL_BODY
}

void kernel_generic(std::uint64_t kc, const float* a, const float* b, float* cout, std::uint64_t ldc,
                    bool accumulate) {
  FAST_MICRO_KERNEL_BODY
}

using Kernel = void (*)(std::uint64_t, const float*, const float*, float*, std::uint64_t, bool);

Kernel pick_kernel() {
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return kernel_avx2;
  return kernel_generic;
}

struct Context {
  Kernel kernel;
  unsigned threads;
};

// One thread's share: C[i0:i1, j0:j1] = A[i0:i1, :] * B[:, j0:j1], written as binary32 into `C`
// (row stride ldc).
void gemm_block(const Context& ctx, const Matrix& A, const Matrix& B, std::uint64_t k, std::uint64_t i0,
                std::uint64_t i1, std::uint64_t j0, std::uint64_t j1, float* C, std::uint64_t ldc) {
  if (i1 <= i0 || j1 <= j0) return;
  if (k == 0) {
    for (std::uint64_t i = i0; i < i1; ++i) std::fill(C + i * ldc + j0, C + i * ldc + j1, 0.0f);
    return;
  }
  const std::uint64_t nc_max = std::min(NC, (j1 - j0 + NR - 1) / NR * NR);
  const std::uint64_t mc_max = std::min(MC, (i1 - i0 + MR - 1) / MR * MR);
  const std::uint64_t kc_max = std::min(KC, k);
  float* bp = static_cast<float*>(std::aligned_alloc(64, (kc_max * nc_max * sizeof(float) + 63) / 64 * 64));
  float* ap = static_cast<float*>(std::aligned_alloc(64, (kc_max * mc_max * sizeof(float) + 63) / 64 * 64));
  alignas(64) float edge[MR * NR];
  for (std::uint64_t jc = j0; jc < j1; jc += NC) {
    const std::uint64_t nc = std::min(NC, j1 - jc);
    for (std::uint64_t pc = 0; pc < k; pc += KC) {
      const std::uint64_t kc = std::min(KC, k - pc);
      pack_b(B, pc, kc, jc, nc, bp);
      for (std::uint64_t ic = i0; ic < i1; ic += MC) {
        const std::uint64_t mc = std::min(MC, i1 - ic);
        pack_a(A, ic, mc, pc, kc, ap);
        for (std::uint64_t jr = 0; jr < nc; jr += NR) {
          const std::uint64_t nr = std::min(NR, nc - jr);
          for (std::uint64_t ir = 0; ir < mc; ir += MR) {
            const std::uint64_t mr = std::min(MR, mc - ir);
            const float* a_sl = ap + ir * kc;
            const float* b_sl = bp + jr * kc;
            float* c_tile = C + (ic + ir) * ldc + jc + jr;
            if (mr == MR && nr == NR) {
              ctx.kernel(kc, a_sl, b_sl, c_tile, ldc, pc > 0);
            } else {  // edge tile: through a full-size scratch tile
              for (std::uint64_t r = 0; r < mr; ++r)
                for (std::uint64_t c = 0; c < nr; ++c) edge[r * NR + c] = pc > 0 ? c_tile[r * ldc + c] : 0.0f;
              ctx.kernel(kc, a_sl, b_sl, edge, NR, pc > 0);
              for (std::uint64_t r = 0; r < mr; ++r)
                for (std::uint64_t c = 0; c < nr; ++c) c_tile[r * ldc + c] = edge[r * NR + c];
            }
          }
        }
      }
    }
  }
  std::free(ap);
  std::free(bp);
}

gpulab_hal_status fast_init(void** ctx, gpulab_hal_error* err) {
  gpulab_hal_clear_error(err);
  auto* c = new (std::nothrow) Context{pick_kernel(), std::max(1u, std::thread::hardware_concurrency())};
  if (c == nullptr) return gpulab_hal_fail(err, GPULAB_HAL_ERR_OUT_OF_MEMORY, "context allocation failed");
  if (const char* t = std::getenv("GPULAB_HAL_FAST_THREADS")) {
    const long v = std::strtol(t, nullptr, 10);
    if (v >= 1 && v <= 256) c->threads = static_cast<unsigned>(v);
  }
  *ctx = c;
  return GPULAB_HAL_OK;
}

void fast_shutdown(void* ctx) { delete static_cast<Context*>(ctx); }

gpulab_hal_status fast_matmul(void* vctx, const gpulab_hal_matmul_args* a, gpulab_hal_error* err) {
  const gpulab_hal_status st = host_check_matmul(a, kDTypes, 0, err);
  if (st != GPULAB_HAL_OK) return st;
  const Context& ctx = *static_cast<const Context*>(vctx);
  const std::uint64_t m = a->m, n = a->n, k = a->k;
  if (m == 0 || n == 0) return GPULAB_HAL_OK;
  const Matrix A{host_data(a->a), k, a->dtype};
  const Matrix B{host_data(a->b), n, a->dtype};
  // F32 writes straight into C; F16 accumulates into a binary32 scratch C first.
  std::vector<float> scratch;
  float* C = static_cast<float*>(host_data(a->c));
  if (a->dtype != GPULAB_HAL_DTYPE_F32) {
    scratch.resize(m * n);
    C = scratch.data();
  }
  // Threads: one stripe of C each, along the longer side, at least ~2 MFLOP per thread.
  const double flops = 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
  unsigned threads = std::min<unsigned>(ctx.threads, static_cast<unsigned>(std::max(1.0, flops / 2e6)));
  const bool split_rows = m >= n;
  const std::uint64_t unit = split_rows ? MR : NR;
  const std::uint64_t extent = split_rows ? m : n;
  threads = static_cast<unsigned>(std::min<std::uint64_t>(threads, (extent + unit - 1) / unit));
  if (threads <= 1) {
    gemm_block(ctx, A, B, k, 0, m, 0, n, C, n);
  } else {
    const std::uint64_t units = (extent + unit - 1) / unit;
    std::vector<std::thread> pool;
    pool.reserve(threads);
    for (unsigned t = 0; t < threads; ++t) {
      const std::uint64_t lo = std::min(extent, units * t / threads * unit);
      const std::uint64_t hi = std::min(extent, units * (t + 1) / threads * unit);
      if (split_rows)
        pool.emplace_back(gemm_block, std::cref(ctx), A, B, k, lo, hi, 0, n, C, n);
      else
        pool.emplace_back(gemm_block, std::cref(ctx), A, B, k, 0, m, lo, hi, C, n);
    }
    for (auto& th : pool) th.join();
  }
  if (a->dtype != GPULAB_HAL_DTYPE_F32)
    for (std::uint64_t i = 0; i < m * n; ++i) gpulab_hal_store(a->dtype, host_data(a->c), i, scratch[i]);
  return GPULAB_HAL_OK;
}

gpulab_hal_status fast_softmax(void* vctx, const gpulab_hal_softmax_args* a, gpulab_hal_error* err) {
  const gpulab_hal_status st = host_check_softmax(a, kDTypes, 0, err);
  if (st != GPULAB_HAL_OK) return st;
  const Context& ctx = *static_cast<const Context*>(vctx);
  const std::uint64_t rows = a->rows, cols = a->cols;
  const unsigned threads = static_cast<unsigned>(
      std::clamp<std::uint64_t>(rows * cols / 65536, 1, std::min<std::uint64_t>(ctx.threads, std::max<std::uint64_t>(rows, 1))));
  auto work = [&](std::uint64_t r0, std::uint64_t r1) {
    const std::uint64_t es = gpulab_hal_dtype_size(a->dtype);
    host_softmax_rows(a->dtype, static_cast<const unsigned char*>(host_data(a->in)) + r0 * cols * es,
                      static_cast<unsigned char*>(host_data(a->out)) + r0 * cols * es, r1 - r0, cols);
  };
  if (threads <= 1) {
    work(0, rows);
  } else {
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < threads; ++t) pool.emplace_back(work, rows * t / threads, rows * (t + 1) / threads);
    for (auto& th : pool) th.join();
  }
  return GPULAB_HAL_OK;
}

// ---- ABI 2.2 decoder-layer ops ---------------------------------------------
// Rows split over threads when there is enough work (2^20 element-operations
// a thread, about the matmul's 2 MFLOP: below that, starting and joining a
// thread on a loaded machine costs more than it saves);
// F32 runs loops written for the auto-vectoriser (unit stride, no aliasing in
// the inner loop, -O3 -ffp-contract=fast), F16 the generic host_layer_ops.h rows.
template <class Work>
void parallel_rows(const Context& ctx, std::uint64_t rows, std::uint64_t work_per_row, Work work) {
  const std::uint64_t total = rows * std::max<std::uint64_t>(work_per_row, 1);
  const auto threads = static_cast<unsigned>(
      std::clamp<std::uint64_t>(total >> 20, 1, std::min<std::uint64_t>(ctx.threads, std::max<std::uint64_t>(rows, 1))));
  if (threads <= 1) {
    work(std::uint64_t{0}, rows);
    return;
  }
  std::vector<std::thread> pool;
  pool.reserve(threads);
  for (unsigned t = 0; t < threads; ++t) pool.emplace_back(work, rows * t / threads, rows * (t + 1) / threads);
  for (auto& th : pool) th.join();
}

void rmsnorm_f32(const gpulab_hal_rmsnorm_args* a, std::uint64_t r0, std::uint64_t r1) {
  const auto* in = static_cast<const float*>(host_data(a->in));
  const auto* w = static_cast<const float*>(host_data(a->weight));
  auto* out = static_cast<float*>(host_data(a->out));
  const std::uint64_t n = a->cols;
  for (std::uint64_t r = r0; r < r1; ++r) {
    const float* x = in + r * n;
    float* y = out + r * n;
    float acc[8] = {};
    std::uint64_t c = 0;
    for (; c + 8 <= n; c += 8)
      for (int l = 0; l < 8; ++l) acc[l] += x[c + l] * x[c + l];
    float ss = 0.0f;
    for (; c < n; ++c) ss += x[c] * x[c];
    for (float v : acc) ss += v;
    const float inv = 1.0f / std::sqrt(ss / static_cast<float>(n ? n : 1) + a->eps);
    for (c = 0; c < n; ++c) y[c] = x[c] * inv * w[c];  // y may be x: element-wise, same index
  }
}

void rope_f32(const gpulab_hal_rope_args* a, std::uint64_t r0, std::uint64_t r1) {
  auto* x = static_cast<float*>(host_data(a->x));
  const auto* pos = static_cast<const std::int32_t*>(host_data(a->positions));
  const auto* cs = static_cast<const float*>(host_data(a->cos_table));
  const auto* sn = static_cast<const float*>(host_data(a->sin_table));
  const std::uint64_t half = a->head_dim / 2;
  for (std::uint64_t r = r0; r < r1; ++r) {
    const float* c = cs + static_cast<std::uint64_t>(pos[r]) * half;
    const float* s = sn + static_cast<std::uint64_t>(pos[r]) * half;
    for (std::uint64_t h = 0; h < a->heads; ++h) {
      float* v = x + r * a->row_stride + a->x_offset + h * a->head_dim;
      for (std::uint64_t i = 0; i < half; ++i) {
        const float u = v[2 * i], w = v[2 * i + 1];
        v[2 * i] = u * c[i] - w * s[i];
        v[2 * i + 1] = u * s[i] + w * c[i];
      }
    }
  }
}

void silu_mul_f32(const gpulab_hal_silu_mul_args* a, std::uint64_t r0, std::uint64_t r1) {
  const auto* in = static_cast<const float*>(host_data(a->in));
  auto* out = static_cast<float*>(host_data(a->out));
  const std::uint64_t n = a->cols;
  for (std::uint64_t r = r0; r < r1; ++r) {
    const float* g = in + r * 2 * n;
    const float* u = g + n;
    float* y = out + r * n;
    for (std::uint64_t i = 0; i < n; ++i) y[i] = g[i] / (1.0f + std::exp(-g[i])) * u[i];
  }
}

// One query row, every head: scores with unit-stride dot products, then the
// weighted V rows summed into a binary32 accumulator of head_dim.
void attention_f32_rows(const gpulab_hal_paged_attention_args* a, std::uint64_t r0, std::uint64_t r1) {
  const auto* q = static_cast<const float*>(host_data(a->q));
  const auto* kc = static_cast<const float*>(host_data(a->k_cache));
  const auto* vc = static_cast<const float*>(host_data(a->v_cache));
  const auto* table = static_cast<const std::int32_t*>(host_data(a->block_table));
  const auto* seq = static_cast<const std::int32_t*>(host_data(a->seq_ids));
  const auto* pos = static_cast<const std::int32_t*>(host_data(a->positions));
  auto* out = static_cast<float*>(host_data(a->out));
  const std::uint64_t hd = a->head_dim, group = a->q_heads / a->kv_heads;
  std::vector<float> scores;
  std::vector<const float*> krow, vrow;
  std::vector<float> acc(hd);
  for (std::uint64_t r = r0; r < r1; ++r) {
    const std::uint64_t n = static_cast<std::uint64_t>(pos[r]) + 1;
    const std::int32_t* blocks = table + static_cast<std::uint64_t>(seq[r]) * a->max_blocks_per_seq;
    scores.resize(n);
    krow.resize(n);
    vrow.resize(n);
    for (std::uint64_t h = 0; h < a->q_heads; ++h) {
      const std::uint64_t g = h / group;
      const float* qh = q + r * a->q_row_stride + a->q_offset + h * hd;
      float mx = -INFINITY;
      for (std::uint64_t t = 0; t < n; ++t) {
        const std::uint64_t off =
            ((static_cast<std::uint64_t>(blocks[t / a->block_size]) * a->block_size + t % a->block_size) * a->kv_heads + g) * hd;
        krow[t] = kc + off;
        vrow[t] = vc + off;
        float dot = 0.0f;
        for (std::uint64_t i = 0; i < hd; ++i) dot += qh[i] * krow[t][i];
        scores[t] = dot * a->scale;
        mx = std::max(mx, scores[t]);
      }
      float sum = 0.0f;
      for (std::uint64_t t = 0; t < n; ++t) sum += (scores[t] = std::exp(scores[t] - mx));
      std::fill(acc.begin(), acc.end(), 0.0f);
      for (std::uint64_t t = 0; t < n; ++t) {
        const float w = scores[t];
        const float* v = vrow[t];
        for (std::uint64_t i = 0; i < hd; ++i) acc[i] += w * v[i];
      }
      float* o = out + (r * a->q_heads + h) * hd;
      const float inv = 1.0f / sum;
      for (std::uint64_t i = 0; i < hd; ++i) o[i] = acc[i] * inv;
    }
  }
}

gpulab_hal_status fast_rmsnorm(void* vctx, const gpulab_hal_rmsnorm_args* a, gpulab_hal_error* err) {
  const gpulab_hal_status st = host_check_rmsnorm(a, kDTypes, err);
  if (st != GPULAB_HAL_OK) return st;
  parallel_rows(*static_cast<const Context*>(vctx), a->rows, a->cols, [a](std::uint64_t r0, std::uint64_t r1) {
    if (a->dtype == GPULAB_HAL_DTYPE_F32) rmsnorm_f32(a, r0, r1);
    else host_rmsnorm_rows(a, r0, r1);
  });
  return GPULAB_HAL_OK;
}

gpulab_hal_status fast_rope(void* vctx, const gpulab_hal_rope_args* a, gpulab_hal_error* err) {
  const gpulab_hal_status st = host_check_rope(a, kDTypes, err);
  if (st != GPULAB_HAL_OK) return st;
  parallel_rows(*static_cast<const Context*>(vctx), a->rows, a->heads * a->head_dim,
                [a](std::uint64_t r0, std::uint64_t r1) {
                  if (a->dtype == GPULAB_HAL_DTYPE_F32) rope_f32(a, r0, r1);
                  else host_rope_rows(a, r0, r1);
                });
  return GPULAB_HAL_OK;
}

gpulab_hal_status fast_silu_mul(void* vctx, const gpulab_hal_silu_mul_args* a, gpulab_hal_error* err) {
  const gpulab_hal_status st = host_check_silu_mul(a, kDTypes, err);
  if (st != GPULAB_HAL_OK) return st;
  parallel_rows(*static_cast<const Context*>(vctx), a->rows, a->cols, [a](std::uint64_t r0, std::uint64_t r1) {
    if (a->dtype == GPULAB_HAL_DTYPE_F32) silu_mul_f32(a, r0, r1);
    else host_silu_mul_rows(a, r0, r1);
  });
  return GPULAB_HAL_OK;
}

gpulab_hal_status fast_paged_attention(void* vctx, const gpulab_hal_paged_attention_args* a, gpulab_hal_error* err) {
  const gpulab_hal_status st = host_check_paged_attention(a, kDTypes, err);
  if (st != GPULAB_HAL_OK) return st;
  // Work per row: the longest context times every head's dot products and sums.
  std::uint64_t longest = 1;
  const auto* pos = static_cast<const std::int32_t*>(host_data(a->positions));
  for (std::uint64_t r = 0; r < a->rows; ++r) longest = std::max<std::uint64_t>(longest, static_cast<std::uint64_t>(pos[r]) + 1);
  std::atomic<bool> ok{true};
  parallel_rows(*static_cast<const Context*>(vctx), a->rows, 2 * longest * a->q_heads * a->head_dim,
                [a, &ok](std::uint64_t r0, std::uint64_t r1) {
                  if (a->dtype == GPULAB_HAL_DTYPE_F32) attention_f32_rows(a, r0, r1);
                  else if (!host_paged_attention_rows(a, r0, r1)) ok.store(false);
                });
  if (!ok) return gpulab_hal_fail(err, GPULAB_HAL_ERR_OUT_OF_MEMORY, "paged_attention: score scratch allocation failed");
  return GPULAB_HAL_OK;
}

gpulab_hal_status fast_describe(void* vctx, char* out, std::uint32_t out_size, gpulab_hal_error* err) {
  gpulab_hal_clear_error(err);
  const Context& ctx = *static_cast<const Context*>(vctx);
  std::snprintf(out, out_size, "host CPU, %u threads, %s 6x16 micro-kernel", ctx.threads,
                ctx.kernel == kernel_avx2 ? "AVX2+FMA" : "baseline-ISA");
  return GPULAB_HAL_OK;
}

constexpr gpulab_hal_backend kFast = {
    GPULAB_HAL_ABI_VERSION,
    sizeof(gpulab_hal_backend),
    "fast",
    "cache-blocked, multi-threaded, SIMD (AVX2+FMA) GEMM",
    kDTypes,
    GPULAB_HAL_OPS_V2_2,
    10,
    GPULAB_HAL_FEATURE_HOST_MEMORY | GPULAB_HAL_FEATURE_THREADED,
    0,
    {0, 0, 0, 0, 0, 0, 0, 0},
    fast_init,
    fast_shutdown,
    host_buffer_alloc,
    host_buffer_free,
    host_copy_to_device,
    host_copy_to_host,
    fast_matmul,
    fast_softmax,
    fast_describe,
    fast_rmsnorm,
    fast_rope,
    fast_silu_mul,
    fast_paged_attention,
};

}  // namespace

extern "C" const gpulab_hal_backend* gpulab_hal_backend_register(void) { return &kFast; }
