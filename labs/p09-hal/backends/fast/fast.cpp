// fast — a CPU backend that tries: GEMM in the GotoBLAS/BLIS structure
// (gemm.hpp: packed A and B blocks sized from this CPU's caches, a
// register-blocked micro-kernel per ISA — 12x32 AVX-512, 6x16 AVX2+FMA —
// picked at run time), on a pool
// of threads kept for the life of the context. F16 is converted to binary32
// while packing, accumulated in binary32 and rounded once when C is written.
// Written in C++ for std::thread; the ABI surface is still the C descriptor.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <new>
#include <string>
#include <thread>
#include <vector>

#include "gemm.hpp"

extern "C" {
#include "../common/host_backend.h"
#include "../common/host_layer_ops.h"
}

namespace {

using fast_backend::GemmEngine;
using fast_backend::WorkerPool;

constexpr std::uint32_t kDTypes = GPULAB_HAL_DTYPE_F32 | GPULAB_HAL_DTYPE_F16;

struct Context {
  unsigned threads;
  std::unique_ptr<WorkerPool> pool;
  GemmEngine gemm;
};

gpulab_hal_status fast_init(void** ctx, gpulab_hal_error* err) {
  gpulab_hal_clear_error(err);
  unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  if (const char* t = std::getenv("GPULAB_HAL_FAST_THREADS")) {
    const long v = std::strtol(t, nullptr, 10);
    if (v >= 1 && v <= 256) threads = static_cast<unsigned>(v);
  }
  // The best kernel this CPU runs, or the one GPULAB_HAL_FAST_ISA names (so
  // the AVX2 kernel is tested, and measured, on an AVX-512 machine too).
  fast_backend::Isa isa{};
  std::string why;
  if (!fast_backend::choose_isa(std::getenv("GPULAB_HAL_FAST_ISA"), fast_backend::this_cpu_isa(), isa, why))
    return gpulab_hal_fail(err, GPULAB_HAL_ERR_INVALID_ARGUMENT, "%s", why.c_str());
  try {
    auto c = std::make_unique<Context>();
    c->pool = std::make_unique<WorkerPool>(threads);
    c->threads = c->pool->size();
    const fast_backend::KernelChoice kernel = fast_backend::kernel_for(isa);
    c->gemm = {kernel,
               fast_backend::blocking_for(fast_backend::this_cpu_caches(), {kernel.mr, kernel.nr}),
               c->pool.get()};
    *ctx = c.release();
  } catch (const std::bad_alloc&) {
    return gpulab_hal_fail(err, GPULAB_HAL_ERR_OUT_OF_MEMORY, "context allocation failed");
  }
  return GPULAB_HAL_OK;
}

void fast_shutdown(void* ctx) { delete static_cast<Context*>(ctx); }

gpulab_hal_status fast_matmul(void* vctx, const gpulab_hal_matmul_args* a, gpulab_hal_error* err) {
  const gpulab_hal_status st = host_check_matmul(a, kDTypes, 0, err);
  if (st != GPULAB_HAL_OK) return st;
  const Context& ctx = *static_cast<const Context*>(vctx);
  const std::uint64_t m = a->m, n = a->n, k = a->k;
  if (m == 0 || n == 0) return GPULAB_HAL_OK;
  const bool f16 = a->dtype != GPULAB_HAL_DTYPE_F32;
  const fast_backend::Matrix A{host_data(a->a), k, f16};
  const fast_backend::Matrix B{host_data(a->b), n, f16};
  // F32 writes straight into C; F16 accumulates into a binary32 scratch C and
  // rounds once at the end.
  std::vector<float> scratch;
  float* C = static_cast<float*>(host_data(a->c));
  try {
    if (f16) {
      scratch.resize(m * n);
      C = scratch.data();
    }
  } catch (const std::bad_alloc&) {
    return gpulab_hal_fail(err, GPULAB_HAL_ERR_OUT_OF_MEMORY, "matmul: F32 scratch of C failed");
  }
  if (!fast_backend::gemm(ctx.gemm, A, B, m, n, k, C))
    return gpulab_hal_fail(err, GPULAB_HAL_ERR_OUT_OF_MEMORY, "matmul: packing buffer allocation failed");
  if (f16)
    for (std::uint64_t i = 0; i < m * n; ++i) gpulab_hal_store(a->dtype, host_data(a->c), i, scratch[i]);
  return GPULAB_HAL_OK;
}

gpulab_hal_status fast_softmax(void* vctx, const gpulab_hal_softmax_args* a, gpulab_hal_error* err) {
  const gpulab_hal_status st = host_check_softmax(a, kDTypes, 0, err);
  if (st != GPULAB_HAL_OK) return st;
  const Context& ctx = *static_cast<const Context*>(vctx);
  const std::uint64_t rows = a->rows, cols = a->cols;
  const auto parts = static_cast<unsigned>(std::clamp<std::uint64_t>(
      rows * cols / 65536, 1, std::min<std::uint64_t>(ctx.threads, std::max<std::uint64_t>(rows, 1))));
  const std::uint64_t es = gpulab_hal_dtype_size(a->dtype);
  ctx.pool->run(parts, [&](unsigned t) {
    const std::uint64_t r0 = rows * t / parts, r1 = rows * (t + 1) / parts;
    host_softmax_rows(a->dtype, static_cast<const unsigned char*>(host_data(a->in)) + r0 * cols * es,
                      static_cast<unsigned char*>(host_data(a->out)) + r0 * cols * es, r1 - r0, cols);
  });
  return GPULAB_HAL_OK;
}

// ---- ABI 2.2 decoder-layer ops ---------------------------------------------
// Rows split over the pool's threads when there is enough work (2^20
// element-operations a thread: below that, waking a worker on a loaded
// machine costs more than it saves);
// F32 runs loops written for the auto-vectoriser (unit stride, no aliasing in
// the inner loop, -O3 -ffp-contract=fast), F16 the generic host_layer_ops.h rows.
template <class Work>
void parallel_rows(const Context& ctx, std::uint64_t rows, std::uint64_t work_per_row, Work work) {
  const std::uint64_t total = rows * std::max<std::uint64_t>(work_per_row, 1);
  const auto parts = static_cast<unsigned>(
      std::clamp<std::uint64_t>(total >> 20, 1, std::min<std::uint64_t>(ctx.threads, std::max<std::uint64_t>(rows, 1))));
  ctx.pool->run(parts, [&](unsigned t) { work(rows * t / parts, rows * (t + 1) / parts); });
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
  const fast_backend::Blocking& b = ctx.gemm.blocking;
  std::snprintf(out, out_size, "host CPU, %u thread%s, %s %llux%llu micro-kernel, kc=%llu mc=%llu nc=%llu",
                ctx.threads, ctx.threads == 1 ? "" : "s", ctx.gemm.kernel.isa_name, static_cast<unsigned long long>(ctx.gemm.kernel.mr),
                static_cast<unsigned long long>(ctx.gemm.kernel.nr), static_cast<unsigned long long>(b.kc),
                static_cast<unsigned long long>(b.mc), static_cast<unsigned long long>(b.nc));
  return GPULAB_HAL_OK;
}

constexpr gpulab_hal_backend kFast = {
    GPULAB_HAL_ABI_VERSION,
    sizeof(gpulab_hal_backend),
    "fast",
    "cache-blocked, multi-threaded, SIMD (AVX-512 or AVX2+FMA) GEMM",
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
