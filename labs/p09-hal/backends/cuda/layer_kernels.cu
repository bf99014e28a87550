// The cuda backend's ABI 2.2 decoder-layer kernels. Templated over the
// storage type (float, __half, __nv_bfloat16); everything is computed in
// binary32 and rounded once on store, like every backend (gpulab_hal.h).
//
//   rmsnorm          one block per row, a shared-memory tree for the sum of squares
//   rope             one thread per (row, head, pair)
//   silu_mul         one thread per output element
//   paged_attention  one block per (row, query head): chunks of blockDim
//                    positions get their scores in parallel (one thread per
//                    position), then every thread folds the chunk into its
//                    head_dim lanes with the online-softmax rescaling, so no
//                    scratch grows with the context length.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cmath>
#include <type_traits>
#include <cstdint>

#include "layer_kernels.h"

namespace {

constexpr int kThreads = 128;
constexpr int kLanes = GPULAB_HAL_CUDA_MAX_HEAD_DIM / kThreads;  // head_dim elements per thread

__device__ inline float load(const float* p, std::uint64_t i) { return p[i]; }
__device__ inline float load(const __half* p, std::uint64_t i) { return __half2float(p[i]); }
__device__ inline float load(const __nv_bfloat16* p, std::uint64_t i) { return __bfloat162float(p[i]); }
__device__ inline void store(float* p, std::uint64_t i, float v) { p[i] = v; }
__device__ inline void store(__half* p, std::uint64_t i, float v) { p[i] = __float2half_rn(v); }
__device__ inline void store(__nv_bfloat16* p, std::uint64_t i, float v) { p[i] = __float2bfloat16_rn(v); }

template <class T>
__global__ void rmsnorm_kernel(std::uint64_t cols, float eps, const T* in, const T* w, T* out) {
  __shared__ float part[kThreads];
  const std::uint64_t r = blockIdx.x;
  const T* x = in + r * cols;
  float ss = 0.0f;
  for (std::uint64_t c = threadIdx.x; c < cols; c += blockDim.x) {
    const float v = load(x, c);
    ss = fmaf(v, v, ss);
  }
  part[threadIdx.x] = ss;
  __syncthreads();
  for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) part[threadIdx.x] += part[threadIdx.x + s];
    __syncthreads();
  }
  const float inv = 1.0f / sqrtf(part[0] / static_cast<float>(cols ? cols : 1) + eps);
  for (std::uint64_t c = threadIdx.x; c < cols; c += blockDim.x) store(out, r * cols + c, load(x, c) * inv * load(w, c));
}

template <class T>
__global__ void rope_kernel(std::uint64_t rows, std::uint64_t heads, std::uint64_t half, std::uint64_t row_stride,
                            std::uint64_t x_offset, std::uint64_t max_position, T* x, const std::int32_t* pos,
                            const float* cs, const float* sn) {
  const std::uint64_t id = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x;
  if (id >= rows * heads * half) return;
  const std::uint64_t r = id / (heads * half), h = id / half % heads, i = id % half;
  const std::uint64_t base = r * row_stride + x_offset + h * 2 * half + 2 * i;
  const std::int32_t p = pos[r];
  if (p < 0 || static_cast<std::uint64_t>(p) >= max_position) {
    store(x, base, NAN);
    store(x, base + 1, NAN);
    return;
  }
  const float c = cs[p * half + i], s = sn[p * half + i], a = load(x, base), b = load(x, base + 1);
  store(x, base, a * c - b * s);
  store(x, base + 1, a * s + b * c);
}

template <class T>
__global__ void silu_mul_kernel(std::uint64_t rows, std::uint64_t cols, const T* in, T* out) {
  const std::uint64_t id = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x;
  if (id >= rows * cols) return;
  const std::uint64_t r = id / cols, i = id % cols;
  const float g = load(in, r * 2 * cols + i), u = load(in, r * 2 * cols + cols + i);
  store(out, id, g / (1.0f + expf(-g)) * u);
}

template <class T>
__global__ void paged_attention_kernel(gpulab_hal_paged_attention_args a, const T* q, const T* kc, const T* vc,
                                       const std::int32_t* table, const std::int32_t* seq_ids,
                                       const std::int32_t* positions, T* out) {
  __shared__ float score[kThreads];
  __shared__ int bad;
  const std::uint64_t r = blockIdx.x, h = blockIdx.y, hd = a.head_dim;
  const std::uint64_t g = h / (a.q_heads / a.kv_heads);
  const T* qh = q + r * a.q_row_stride + a.q_offset + h * hd;
  const std::uint64_t o0 = (r * a.q_heads + h) * hd;
  const std::int32_t s = seq_ids[r], p = positions[r];
  if (threadIdx.x == 0) {
    bad = s < 0 || static_cast<std::uint64_t>(s) >= a.num_seqs || p < 0 ||
          static_cast<std::uint64_t>(p) >= a.max_blocks_per_seq * a.block_size;
    for (std::uint64_t j = 0; !bad && j <= static_cast<std::uint64_t>(p) / a.block_size; ++j) {
      const std::int32_t b = table[static_cast<std::uint64_t>(s) * a.max_blocks_per_seq + j];
      bad = b < 0 || static_cast<std::uint64_t>(b) >= a.num_blocks;
    }
  }
  __syncthreads();
  if (bad) {
    for (std::uint64_t i = threadIdx.x; i < hd; i += blockDim.x) store(out, o0 + i, NAN);
    return;
  }
  const std::int32_t* blocks = table + static_cast<std::uint64_t>(s) * a.max_blocks_per_seq;
  auto slot = [&](std::uint64_t t) {
    return ((static_cast<std::uint64_t>(blocks[t / a.block_size]) * a.block_size + t % a.block_size) * a.kv_heads + g) *
           hd;
  };
  const std::uint64_t n = static_cast<std::uint64_t>(p) + 1;
  float m = -INFINITY, l = 0.0f, acc[kLanes];
  for (int j = 0; j < kLanes; ++j) acc[j] = 0.0f;
  for (std::uint64_t t0 = 0; t0 < n; t0 += blockDim.x) {
    const std::uint64_t t = t0 + threadIdx.x;
    float sc = -INFINITY;
    if (t < n) {
      const std::uint64_t k0 = slot(t);
      float dot = 0.0f;
      for (std::uint64_t i = 0; i < hd; ++i) dot = fmaf(load(qh, i), load(kc, k0 + i), dot);
      sc = dot * a.scale;
    }
    score[threadIdx.x] = sc;
    __syncthreads();
    const std::uint64_t count = min(static_cast<std::uint64_t>(blockDim.x), n - t0);
    float cm = m;
    for (std::uint64_t k = 0; k < count; ++k) cm = fmaxf(cm, score[k]);
    const float corr = expf(m - cm);  // 0 on the first chunk (m = -inf)
    l *= corr;
    for (int j = 0; j < kLanes; ++j) acc[j] *= corr;
    for (std::uint64_t k = 0; k < count; ++k) {
      const float w = expf(score[k] - cm);
      const std::uint64_t v0 = slot(t0 + k);
      l += w;
      for (int j = 0; j < kLanes; ++j) {
        const std::uint64_t i = threadIdx.x + static_cast<std::uint64_t>(j) * blockDim.x;
        if (i < hd) acc[j] = fmaf(w, load(vc, v0 + i), acc[j]);
      }
    }
    m = cm;
    __syncthreads();
  }
  for (int j = 0; j < kLanes; ++j) {
    const std::uint64_t i = threadIdx.x + static_cast<std::uint64_t>(j) * blockDim.x;
    if (i < hd) store(out, o0 + i, acc[j] / l);
  }
}

int finish() {
  cudaError_t e = cudaGetLastError();
  if (e == cudaSuccess) e = cudaDeviceSynchronize();
  return static_cast<int>(e);
}

unsigned blocks_for(std::uint64_t n) { return static_cast<unsigned>((n + kThreads - 1) / kThreads); }

// Calls f with a null pointer of the storage type of `dtype`.
template <class F>
int by_dtype(std::uint32_t dtype, F f) {
  switch (dtype) {
    case GPULAB_HAL_DTYPE_F16: return f(static_cast<__half*>(nullptr));
    case GPULAB_HAL_DTYPE_BF16: return f(static_cast<__nv_bfloat16*>(nullptr));
    default: return f(static_cast<float*>(nullptr));
  }
}

}  // namespace

extern "C" int gpulab_cuda_rmsnorm(const gpulab_hal_rmsnorm_args* a, const void* in, const void* weight, void* out) {
  if (a->rows == 0) return 0;
  return by_dtype(a->dtype, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    rmsnorm_kernel<T><<<static_cast<unsigned>(a->rows), kThreads>>>(a->cols, a->eps, static_cast<const T*>(in),
                                                                     static_cast<const T*>(weight), static_cast<T*>(out));
    return finish();
  });
}

extern "C" int gpulab_cuda_rope(const gpulab_hal_rope_args* a, void* x, const int32_t* positions,
                                const float* cos_table, const float* sin_table) {
  const std::uint64_t n = a->rows * a->heads * (a->head_dim / 2);
  if (n == 0) return 0;
  return by_dtype(a->dtype, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    rope_kernel<T><<<blocks_for(n), kThreads>>>(a->rows, a->heads, a->head_dim / 2, a->row_stride, a->x_offset,
                                                a->max_position, static_cast<T*>(x), positions, cos_table, sin_table);
    return finish();
  });
}

extern "C" int gpulab_cuda_silu_mul(const gpulab_hal_silu_mul_args* a, const void* in, void* out) {
  const std::uint64_t n = a->rows * a->cols;
  if (n == 0) return 0;
  return by_dtype(a->dtype, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    silu_mul_kernel<T><<<blocks_for(n), kThreads>>>(a->rows, a->cols, static_cast<const T*>(in), static_cast<T*>(out));
    return finish();
  });
}

extern "C" int gpulab_cuda_paged_attention(const gpulab_hal_paged_attention_args* a, const void* q, const void* k_cache,
                                           const void* v_cache, const int32_t* block_table, const int32_t* seq_ids,
                                           const int32_t* positions, void* out) {
  if (a->rows == 0 || a->q_heads == 0) return 0;
  const dim3 grid(static_cast<unsigned>(a->rows), static_cast<unsigned>(a->q_heads));
  return by_dtype(a->dtype, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    paged_attention_kernel<T><<<grid, kThreads>>>(*a, static_cast<const T*>(q), static_cast<const T*>(k_cache),
                                                  static_cast<const T*>(v_cache), block_table, seq_ids, positions,
                                                  static_cast<T*>(out));
    return finish();
  });
}
