// coalescing-bench's device code: strided copies, float4 copy, AoS vs SoA
// field sums and the transpose ladder, each timed with CUDA events and
// checked against values the host computed.
#include <cuda_pipeline.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <string>

#include "gpulab/cuda/check.hpp"
#include "gpulab/cuda/device_array.cuh"
#include "gpulab/cuda/event.cuh"
#include "gpulab/cuda/kernel_resources.cuh"
#include "coalescing/device.hpp"

namespace coalescing {
namespace {

using gpulab::cuda::DeviceArray;
using gpulab::cuda::Event;

constexpr int kTile = 32;      // transpose tile edge
constexpr int kBlockRows = 8;  // 32 x 8 threads per tile, 4 rows each (Harris)

// ---------------------------------------------------------------- kernels

// Lane l of a warp touches element (base + l) * stride: one sector per lane once stride >= 8.
__global__ void strided_copy(const float* in, float* out, long long count, int stride) {
  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < count) out[i * stride] = in[i * stride];
}

// 16 bytes per lane: a quarter of the instructions per byte of a float copy.
__global__ void float4_copy(const float4* in, float4* out, long long count) {
  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < count) out[i] = in[i];
}

struct Point {
  float x, y, z;
};

// Sum of .x; the loads are the whole cost (one 4-byte partial per 32 lanes is written).
template <class Load>
__device__ void field_sum_body(Load load, float* partial, long long points) {
  const long long tid = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  const long long nthreads = static_cast<long long>(gridDim.x) * blockDim.x;
  float acc = 0.0f;
  for (long long i = tid; i < points; i += nthreads) acc += load(i);
  for (int offset = 16; offset > 0; offset >>= 1) acc += __shfl_down_sync(0xffffffffu, acc, offset);
  if ((threadIdx.x & 31) == 0) partial[tid / 32] = acc;
}

__global__ void sum_x_aos(const Point* pts, float* partial, long long points) {
  field_sum_body([pts](long long i) { return pts[i].x; }, partial,
                 points);  // 12-byte stride per lane
}

__global__ void sum_x_soa(const float* xs, float* partial, long long points) {
  field_sum_body([xs](long long i) { return xs[i]; }, partial, points);  // 4-byte stride per lane
}

// The ceiling: same 32x8 block and 4 rows per thread as the transposes, no turn.
__global__ void copy_2d(const float* in, float* out, int n) {
  const int x = blockIdx.x * kTile + threadIdx.x;
  const int y = blockIdx.y * kTile + threadIdx.y;
  for (int j = 0; j < kTile; j += kBlockRows) out[(y + j) * n + x] = in[(y + j) * n + x];
}

// Reads coalesced along a row, writes a column: 32 sectors per warp store.
__global__ void transpose_naive(const float* in, float* out, int n) {
  const int x = blockIdx.x * kTile + threadIdx.x;
  const int y = blockIdx.y * kTile + threadIdx.y;
  for (int j = 0; j < kTile; j += kBlockRows) out[x * n + (y + j)] = in[(y + j) * n + x];
}

// The turn happens in shared memory: rows in, columns out of the tile. With a
// pitch of 32 the column read puts all 32 lanes in one bank; 33 rotates each row.
template <int kPitch, int kRows>
__device__ __forceinline__ void transpose_tiled_body(const float* in, float* out, int n) {
  __shared__ float tile[kTile][kPitch];
  int x = blockIdx.x * kTile + threadIdx.x;
  int y = blockIdx.y * kTile + threadIdx.y;
  for (int j = 0; j < kTile; j += kRows) tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * n + x];
  __syncthreads();
  x = blockIdx.y * kTile + threadIdx.x;
  y = blockIdx.x * kTile + threadIdx.y;
  for (int j = 0; j < kTile; j += kRows) out[(y + j) * n + x] = tile[threadIdx.x][threadIdx.y + j];
}

template <int kPitch>
__global__ void transpose_tiled(const float* in, float* out, int n) {
  transpose_tiled_body<kPitch, kBlockRows>(in, out, n);
}

// The occupancy experiment: one thread per element in 32x32 blocks, and a
// promise of one 1,024-thread block per SM.
__global__ void __launch_bounds__(1024, 1)
    transpose_padded_1024(const float* in, float* out, int n) {
  transpose_tiled_body<kTile + 1, kTile>(in, out, n);
}

// Persistent blocks walk the tiles; cp.async (sm_80+) loads tile t+1 into the
// second buffer while tile t is being stored. On older GPUs the same
// primitives compile to ordinary loads, so the host only runs it on sm_80+.
__global__ void transpose_padded_cp_async(const float* in, float* out, int n) {
  __shared__ float tile[2][kTile][kTile + 1];
  const int tiles_x = n / kTile;
  const int tiles = tiles_x * tiles_x;
  auto issue = [&](int t, int buf) {
    const int x = (t % tiles_x) * kTile + threadIdx.x;
    const int y = (t / tiles_x) * kTile + threadIdx.y;
    for (int j = 0; j < kTile; j += kBlockRows)
      __pipeline_memcpy_async(&tile[buf][threadIdx.y + j][threadIdx.x], &in[(y + j) * n + x],
                              sizeof(float));
    __pipeline_commit();
  };
  int buf = 0;
  if (static_cast<int>(blockIdx.x) < tiles) issue(blockIdx.x, 0);
  for (int t = blockIdx.x; t < tiles; t += gridDim.x) {
    const int next = t + gridDim.x;
    if (next < tiles) {
      issue(next, buf ^ 1);
      __pipeline_wait_prior(1);  // this tile has landed; the next one may still be in flight
    } else {
      __pipeline_wait_prior(0);
    }
    __syncthreads();
    const int x = (t / tiles_x) * kTile + threadIdx.x;
    const int y = (t % tiles_x) * kTile + threadIdx.y;
    for (int j = 0; j < kTile; j += kBlockRows)
      out[(y + j) * n + x] = tile[buf][threadIdx.x][threadIdx.y + j];
    __syncthreads();  // nobody still reads tile[buf] when the next issue refills it
    buf ^= 1;
  }
}

// ---------------------------------------------------------------- host helpers

// Exactly representable values (integers below 2^24), so copies compare with ==.
std::vector<float> pattern(std::size_t count) {
  std::vector<float> v(count);
  for (std::size_t i = 0; i < count; ++i) v[i] = static_cast<float>(i % 16777213u);
  return v;
}

struct Launch {
  const void* fn;
  dim3 grid, block;
};

// Warm-up, then `reps` launches each bracketed by CUDA events; fills the
// kernel's registers and occupancy from the runtime.
Measured time_kernel(const Launch& l, void** args, const Plan& plan) {
  Measured m;
  for (int i = 0; i < plan.warmup; ++i)
    GPULAB_CUDA_CHECK(cudaLaunchKernel(l.fn, l.grid, l.block, args, 0, nullptr));
  GPULAB_CUDA_CHECK(cudaDeviceSynchronize());
  Event start, stop;
  for (int r = 0; r < plan.reps; ++r) {
    GPULAB_CUDA_CHECK(cudaEventRecord(start.get()));
    GPULAB_CUDA_CHECK(cudaLaunchKernel(l.fn, l.grid, l.block, args, 0, nullptr));
    GPULAB_CUDA_CHECK(cudaEventRecord(stop.get()));
    GPULAB_CUDA_CHECK(cudaEventSynchronize(stop.get()));
    float ms = 0;
    GPULAB_CUDA_CHECK(cudaEventElapsedTime(&ms, start.get(), stop.get()));
    m.event_ms.push_back(ms);
  }
  const gpulab::cuda::KernelResources res = gpulab::cuda::kernel_resources(l.fn, l.block);
  m.registers = res.registers;
  m.threads_per_block = res.threads_per_block;
  m.blocks_per_sm = res.blocks_per_sm;
  m.occupancy = res.occupancy;
  return m;
}

void first_mismatch(Measured& m, std::size_t index, float got, float want) {
  m.verified = false;
  m.mismatch = "element " + std::to_string(index) + ": got " + std::to_string(got) + ", want " +
               std::to_string(want);
}

unsigned blocks_for(std::size_t threads, unsigned block) {
  return static_cast<unsigned>((threads + block - 1) / block);
}

}  // namespace

Measured run_strided_copy(std::size_t floats, int stride, const Plan& plan) {
  const std::vector<float> host_in = pattern(floats);
  DeviceArray<float> in(floats), out(floats);
  in.upload(host_in);
  GPULAB_CUDA_CHECK(cudaMemset(out.get(), 0xff, floats * sizeof(float)));  // NaN everywhere
  long long count = static_cast<long long>(floats / static_cast<std::size_t>(stride));
  const float* pin = in.get();
  float* pout = out.get();
  int s = stride;
  void* args[] = {&pin, &pout, &count, &s};
  Measured m = time_kernel({reinterpret_cast<const void*>(&strided_copy),
                            dim3(blocks_for(static_cast<std::size_t>(count), 256)), dim3(256)},
                           args, plan);
  const std::vector<float> got = out.download();
  m.verified = true;
  for (std::size_t i = 0; i < static_cast<std::size_t>(count); ++i) {
    const std::size_t k = i * static_cast<std::size_t>(stride);
    if (got[k] != host_in[k]) {
      first_mismatch(m, k, got[k], host_in[k]);
      break;
    }
  }
  return m;
}

Measured run_float4_copy(std::size_t floats, const Plan& plan) {
  const std::vector<float> host_in = pattern(floats);
  DeviceArray<float> in(floats), out(floats);
  in.upload(host_in);
  GPULAB_CUDA_CHECK(cudaMemset(out.get(), 0xff, floats * sizeof(float)));
  long long count = static_cast<long long>(floats / 4);
  const float4* pin = reinterpret_cast<const float4*>(in.get());  // cudaMalloc aligns to 256 bytes
  float4* pout = reinterpret_cast<float4*>(out.get());
  void* args[] = {&pin, &pout, &count};
  Measured m = time_kernel({reinterpret_cast<const void*>(&float4_copy),
                            dim3(blocks_for(static_cast<std::size_t>(count), 256)), dim3(256)},
                           args, plan);
  const std::vector<float> got = out.download();
  m.verified = true;
  for (std::size_t i = 0; i < static_cast<std::size_t>(count) * 4; ++i)
    if (got[i] != host_in[i]) {
      first_mismatch(m, i, got[i], host_in[i]);
      break;
    }
  return m;
}

Measured run_field_sum(Layout layout, std::size_t points, const Plan& plan) {
  // x = i % 8: every partial sum is a small integer, so the total is exact in float.
  double want = 0;
  for (std::size_t i = 0; i < points; ++i) want += static_cast<double>(i % 8);
  constexpr unsigned kThreads = 256, kPerThread = 8;
  const unsigned blocks = blocks_for(points, kThreads * kPerThread);
  const std::size_t partials = std::size_t{blocks} * kThreads / 32;
  DeviceArray<float> partial(partials);
  long long np = static_cast<long long>(points);
  float* pp = partial.get();
  Measured m;
  if (layout == Layout::kAoS) {
    std::vector<float> host(points * 3, -1.0f);  // y and z are -1: any misread shows in the sum
    for (std::size_t i = 0; i < points; ++i) host[3 * i] = static_cast<float>(i % 8);
    DeviceArray<float> data(points * 3);
    data.upload(host);
    const Point* pts = reinterpret_cast<const Point*>(data.get());
    void* args[] = {&pts, &pp, &np};
    m = time_kernel({reinterpret_cast<const void*>(&sum_x_aos), dim3(blocks), dim3(kThreads)}, args,
                    plan);
  } else {
    std::vector<float> host(points);
    for (std::size_t i = 0; i < points; ++i) host[i] = static_cast<float>(i % 8);
    DeviceArray<float> data(points);
    data.upload(host);
    const float* xs = data.get();
    void* args[] = {&xs, &pp, &np};
    m = time_kernel({reinterpret_cast<const void*>(&sum_x_soa), dim3(blocks), dim3(kThreads)}, args,
                    plan);
  }
  double got = 0;
  for (float p : partial.download()) got += p;
  m.verified = got == want;
  if (!m.verified)
    m.mismatch = "sum of x: got " + std::to_string(got) + ", want " + std::to_string(want);
  return m;
}

Measured run_transpose(Transpose kind, int n, const Plan& plan) {
  const std::size_t count = static_cast<std::size_t>(n) * static_cast<std::size_t>(n);
  const std::vector<float> host_in = pattern(count);
  DeviceArray<float> in(count), out(count);
  in.upload(host_in);
  GPULAB_CUDA_CHECK(cudaMemset(out.get(), 0xff, count * sizeof(float)));
  const unsigned tiles = static_cast<unsigned>(n / kTile);
  Launch l{nullptr, dim3(tiles, tiles), dim3(kTile, kBlockRows)};
  switch (kind) {
    case Transpose::kCopy:
      l.fn = reinterpret_cast<const void*>(&copy_2d);
      break;
    case Transpose::kNaive:
      l.fn = reinterpret_cast<const void*>(&transpose_naive);
      break;
    case Transpose::kTiled:
      l.fn = reinterpret_cast<const void*>(&transpose_tiled<kTile>);
      break;
    case Transpose::kPadded:
      l.fn = reinterpret_cast<const void*>(&transpose_tiled<kTile + 1>);
      break;
    case Transpose::kPaddedBounds1024:
      l.fn = reinterpret_cast<const void*>(&transpose_padded_1024);
      l.block = dim3(kTile, kTile);
      break;
    case Transpose::kPaddedCpAsync: {
      l.fn = reinterpret_cast<const void*>(&transpose_padded_cp_async);
      int per_sm = 0, device = 0, sms = 0;
      GPULAB_CUDA_CHECK(
          cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, l.fn, kTile * kBlockRows, 0));
      GPULAB_CUDA_CHECK(cudaGetDevice(&device));
      GPULAB_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
      const unsigned resident =
          static_cast<unsigned>(per_sm * sms);  // persistent: one wave of blocks
      l.grid = dim3(resident < tiles * tiles ? resident : tiles * tiles);
      break;
    }
  }
  const float* pin = in.get();
  float* pout = out.get();
  int nn = n;
  void* args[] = {&pin, &pout, &nn};
  Measured m = time_kernel(l, args, plan);
  const std::vector<float> got = out.download();
  m.verified = true;
  const std::size_t un = static_cast<std::size_t>(n);
  for (std::size_t r = 0; r < un && m.verified; ++r)
    for (std::size_t c = 0; c < un; ++c) {
      const float want = kind == Transpose::kCopy ? host_in[r * un + c] : host_in[c * un + r];
      if (got[r * un + c] != want) {
        first_mismatch(m, r * un + c, got[r * un + c], want);
        break;
      }
    }
  return m;
}

}  // namespace coalescing
