// The lab's device code: vec_add, the matmul ladder (naive -> tiled ->
// rectangular -> register micro-tiles -> cuBLAS), and the harness that times
// them with CUDA events. Host-side checking lives in the C++ library.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <string>
#include <stdexcept>
#include <utility>

#include "gpulab/cuda/check.hpp"
#include "gpulab/cuda/device_array.cuh"
#include "gpulab/cuda/event.cuh"
#include "gpulab/cuda/kernel_resources.cuh"
#include "kernels/device.hpp"

namespace kernels {
namespace {

using DeviceBuffer = gpulab::cuda::DeviceArray<float>;
using gpulab::cuda::Event;
using gpulab::cuda::throw_cuda_error;

// ---------------------------------------------------------------- kernels

// The first kernel: one thread per element, and the tail guard that the grid
// (a multiple of the block size) needs when n is not.
template <bool kTailGuard>
__global__ void vec_add(const float* a, const float* b, float* c, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (!kTailGuard || i < n) c[i] = a[i] + b[i];
}

// The copy ceiling: the same access pattern as vec_add with one input.
__global__ void copy_kernel(const float* in, float* out, long long n) {
  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i];
}

// The host-pointer pitfall's kernel: nothing in it says where p points.
__global__ void scale_in_place(float* p, long long n, float factor) {
  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) p[i] *= factor;
}

// One thread per C element, every operand from global memory. B's column read
// is coalesced across the warp (adjacent threads, adjacent columns); the
// problem is reuse: every element of A and B is fetched n times.
__global__ void matmul_naive(const float* A, const float* B, float* C, int n) {
  const int row = blockIdx.y * blockDim.y + threadIdx.y;
  const int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < n && col < n) {
    float acc = 0.0f;
    for (int k = 0; k < n; ++k) acc += A[row * n + k] * B[k * n + col];
    C[row * n + col] = acc;
  }
}

// Shared-memory tiling with T = 32: each global element is loaded once per
// tile and reused 32 times. Two barriers per tile: after the load (the tile is
// complete) and after the compute (nobody still reads it when it is overwritten).
template <bool kSecondSync>
__global__ void matmul_tiled(const float* A, const float* B, float* C, int n) {
  constexpr int T = 32;
  __shared__ float As[T][T];
  __shared__ float Bs[T][T];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int row = blockIdx.y * T + ty, col = blockIdx.x * T + tx;
  float acc = 0.0f;
  for (int t = 0; t < n / T; ++t) {
    As[ty][tx] = A[row * n + t * T + tx];
    Bs[ty][tx] = B[(t * T + ty) * n + col];
    __syncthreads();
    for (int k = 0; k < T; ++k) acc += As[ty][k] * Bs[k][tx];
    if (kSecondSync) __syncthreads();  // --drop-second-sync removes this one
  }
  C[row * n + col] = acc;
}

// Rectangular blocking: a 64-row x 16-column C tile, K-step 16, one output per thread.
__global__ void matmul_rect64x16(const float* A, const float* B, float* C, int n) {
  constexpr int BR = 64, BC = 16, BK = 16;
  __shared__ float As[BR][BK];
  __shared__ float Bs[BK][BC];
  const int tx = threadIdx.x, ty = threadIdx.y;  // 16 x 64 threads
  const int row = blockIdx.y * BR + ty, col = blockIdx.x * BC + tx;
  float acc = 0.0f;
  for (int k0 = 0; k0 < n; k0 += BK) {
    As[ty][tx] = A[row * n + k0 + tx];
    if (ty < BK) Bs[ty][tx] = B[(k0 + ty) * n + col];
    __syncthreads();
    for (int k = 0; k < BK; ++k) acc += As[ty][k] * Bs[k][tx];
    __syncthreads();
  }
  C[row * n + col] = acc;
}

// Register blocking: a block computes a BM x BN tile of C, each thread a TM x TN
// micro-tile held in registers. Per k, a thread loads TM + TN values from shared
// memory for TM * TN FMAs. As is stored transposed so a thread's TM values of A
// are contiguous.
template <int BM, int BN, int BK, int TM, int TN>
__device__ __forceinline__ void matmul_micro_body(const float* A, const float* B, float* C, int n) {
  constexpr int kThreads = (BM / TM) * (BN / TN);
  __shared__ float As[BK][BM];
  __shared__ float Bs[BK][BN];
  const int tid = threadIdx.x;
  const int tr = tid / (BN / TN), tc = tid % (BN / TN);
  const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
  float acc[TM][TN] = {};
  float a_frag[TM];
  float b_frag[TN];
  for (int k0 = 0; k0 < n; k0 += BK) {
    // Cooperative, coalesced loads: consecutive threads read consecutive addresses.
    for (int idx = tid; idx < BM * BK; idx += kThreads) {
      const int r = idx / BK, c = idx % BK;
      As[c][r] = A[(row0 + r) * n + k0 + c];
    }
    for (int idx = tid; idx < BK * BN; idx += kThreads) {
      const int r = idx / BN, c = idx % BN;
      Bs[r][c] = B[(k0 + r) * n + col0 + c];
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < BK; ++k) {
#pragma unroll
      for (int i = 0; i < TM; ++i) a_frag[i] = As[k][tr * TM + i];
#pragma unroll
      for (int j = 0; j < TN; ++j) b_frag[j] = Bs[k][tc * TN + j];
#pragma unroll
      for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] += a_frag[i] * b_frag[j];
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int j = 0; j < TN; ++j) C[(row0 + tr * TM + i) * n + col0 + tc * TN + j] = acc[i][j];
}

template <int BM, int BN, int BK, int TM, int TN>
__global__ void matmul_micro(const float* A, const float* B, float* C, int n) {
  matmul_micro_body<BM, BN, BK, TM, TN>(A, B, C, n);
}

// The same 8x8 micro-tile kernel, promised to run 4 blocks of 256 threads per
// SM: ptxas must fit it in 65,536 / 1,024 = 64 registers per thread, although
// the accumulators alone need 64. See `cuda-kernels ptxas` for what it did.
__global__ void __launch_bounds__(256, 4)
    matmul_micro8x8_lb(const float* A, const float* B, float* C, int n) {
  matmul_micro_body<128, 128, 8, 8, 8>(A, B, C, n);
}

// ---------------------------------------------------------------- host helpers

// Warm-up, one enqueue timed with std::chrono (the lie), then `reps` launches
// each bracketed by CUDA events. `launch` must enqueue exactly one operation.
template <class Launch, class AfterRep>
TimedRun time_launches(Launch&& launch, const TimingPlan& plan, AfterRep&& after_rep) {
  TimedRun run;
  for (int i = 0; i < plan.warmup; ++i) {
    launch();
    GPULAB_CUDA_CHECK(cudaGetLastError());  // launch-configuration errors (synchronous)
  }
  GPULAB_CUDA_CHECK(cudaDeviceSynchronize());  // faults of the kernel itself (asynchronous)

  const auto t0 = std::chrono::steady_clock::now();
  launch();
  const auto t1 = std::chrono::steady_clock::now();  // the kernel is most likely still running
  run.chrono_enqueue_ms = std::chrono::duration<double, std::milli>(t1 - t0).count();
  GPULAB_CUDA_CHECK(cudaGetLastError());
  GPULAB_CUDA_CHECK(cudaDeviceSynchronize());

  Event start, stop;
  for (int r = 0; r < plan.reps; ++r) {
    GPULAB_CUDA_CHECK(cudaEventRecord(start.get()));
    launch();
    GPULAB_CUDA_CHECK(cudaGetLastError());
    GPULAB_CUDA_CHECK(cudaEventRecord(stop.get()));
    GPULAB_CUDA_CHECK(cudaEventSynchronize(stop.get()));
    float ms = 0;
    GPULAB_CUDA_CHECK(cudaEventElapsedTime(&ms, start.get(), stop.get()));
    run.event_ms.push_back(ms);
    after_rep(run);
  }
  return run;
}

void check_plan(const TimingPlan& plan) {
  if (plan.warmup < 0 || plan.reps < 1)
    throw std::invalid_argument("timing plan needs reps >= 1 and warmup >= 0");
}

class Cublas {
 public:
  Cublas() {
    if (cublasCreate(&h_) != CUBLAS_STATUS_SUCCESS)
      throw_cuda_error(__FILE__, __LINE__, "cublasCreate", "failed");
    // Plain FP32: no TF32 Tensor-Core shortcut, so the comparison is like for like.
    cublasSetMathMode(h_, CUBLAS_DEFAULT_MATH);
  }
  ~Cublas() { cublasDestroy(h_); }
  Cublas(const Cublas&) = delete;
  Cublas& operator=(const Cublas&) = delete;
  // Row-major C = A * B is column-major C^T = B^T * A^T: pass B first.
  void sgemm_row_major(const float* A, const float* B, float* C, int n) const {
    const float one = 1.0f, zero = 0.0f;
    const cublasStatus_t s =
        cublasSgemm(h_, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, B, n, A, n, &zero, C, n);
    if (s != CUBLAS_STATUS_SUCCESS)
      throw_cuda_error(__FILE__, __LINE__, "cublasSgemm", cublasGetStatusString(s));
  }

 private:
  cublasHandle_t h_{};
};

struct KernelLaunch {
  const void* fn;
  dim3 grid, block;
};

KernelLaunch matmul_launch(MatmulKernel k, int n, bool second_sync) {
  const unsigned un = static_cast<unsigned>(n);
  switch (k) {
    case MatmulKernel::kNaive:
      return {reinterpret_cast<const void*>(&matmul_naive), dim3((un + 15) / 16, (un + 15) / 16),
              dim3(16, 16)};
    case MatmulKernel::kTiled:
      return {second_sync ? reinterpret_cast<const void*>(&matmul_tiled<true>)
                          : reinterpret_cast<const void*>(&matmul_tiled<false>),
              dim3(un / 32, un / 32), dim3(32, 32)};
    case MatmulKernel::kRect64x16:
      return {reinterpret_cast<const void*>(&matmul_rect64x16), dim3(un / 16, un / 64),
              dim3(16, 64)};
    case MatmulKernel::kMicro2x2:
      return {reinterpret_cast<const void*>(&matmul_micro<32, 32, 32, 2, 2>),
              dim3(un / 32, un / 32), dim3(256)};
    case MatmulKernel::kMicro4x4:
      return {reinterpret_cast<const void*>(&matmul_micro<64, 64, 16, 4, 4>),
              dim3(un / 64, un / 64), dim3(256)};
    case MatmulKernel::kMicro8x8:
      return {reinterpret_cast<const void*>(&matmul_micro<128, 128, 8, 8, 8>),
              dim3(un / 128, un / 128), dim3(256)};
    case MatmulKernel::kMicro8x8Bounded:
      return {reinterpret_cast<const void*>(&matmul_micro8x8_lb), dim3(un / 128, un / 128),
              dim3(256)};
    case MatmulKernel::kCublas:
      break;
  }
  throw std::invalid_argument("matmul_launch: cuBLAS is not a hand-written kernel");
}

}  // namespace

TimedRun run_copy(std::size_t bytes, const TimingPlan& plan) {
  check_plan(plan);
  const std::size_t n = bytes / sizeof(float);
  DeviceBuffer in(n), out(n);
  GPULAB_CUDA_CHECK(cudaMemset(in.get(), 0, n * sizeof(float)));
  const unsigned blocks = static_cast<unsigned>((n + 255) / 256);
  return time_launches(
      [&] { copy_kernel<<<blocks, 256>>>(in.get(), out.get(), static_cast<long long>(n)); }, plan,
      [](TimedRun&) {});
}

TimedRun run_vec_add(const std::vector<float>& a, const std::vector<float>& b, std::size_t n,
                     float canary, bool tail_guard, const TimingPlan& plan) {
  check_plan(plan);
  if (a.size() != b.size() || a.size() < n)
    throw std::invalid_argument("run_vec_add: a and b must be equal and >= n");
  const std::size_t len = a.size();
  constexpr unsigned kThreads = 256;
  const unsigned blocks = static_cast<unsigned>((n + kThreads - 1) / kThreads);  // ceil-div
  // With no tail guard and len < blocks * 256 the last block writes past the
  // allocation: real undefined behaviour, which is what --exact-alloc is for.
  DeviceBuffer da(len), db(len), dc(len);
  da.upload(a);
  db.upload(b);
  const std::vector<float> canaries(len, canary);
  dc.upload(canaries);
  const int ni = static_cast<int>(n);
  auto launch = [&] {
    if (tail_guard)
      vec_add<true><<<blocks, kThreads>>>(da.get(), db.get(), dc.get(), ni);
    else
      vec_add<false><<<blocks, kThreads>>>(da.get(), db.get(), dc.get(), ni);
  };
  TimedRun run = time_launches(launch, plan, [](TimedRun&) {});
  run.out = dc.download();
  return run;
}

TimedRun run_matmul(MatmulKernel kernel, const std::vector<float>& a, const std::vector<float>& b,
                    int n, const TimingPlan& plan, const MatmulOptions& opts) {
  check_plan(plan);
  const std::size_t count = static_cast<std::size_t>(n) * static_cast<std::size_t>(n);
  if (n <= 0 || n % 128 != 0 || a.size() != count || b.size() != count)
    throw std::invalid_argument("run_matmul: n must be a positive multiple of 128 and A, B n x n");
  DeviceBuffer da(count), db(count), dc(count);
  da.upload(a);
  db.upload(b);
  GPULAB_CUDA_CHECK(cudaMemset(dc.get(), 0, count * sizeof(float)));

  auto keep = [&](TimedRun& run) {
    if (opts.keep_every_output) run.every_out.push_back(dc.download());
  };
  TimedRun run;
  if (kernel == MatmulKernel::kCublas) {
    const Cublas blas;
    run = time_launches([&] { blas.sgemm_row_major(da.get(), db.get(), dc.get(), n); }, plan, keep);
  } else {
    const KernelLaunch l = matmul_launch(kernel, n, !opts.drop_second_sync);
    const float* pa = da.get();
    const float* pb = db.get();
    float* pc = dc.get();
    int nn = n;
    void* args[] = {&pa, &pb, &pc, &nn};
    run = time_launches(
        [&] { GPULAB_CUDA_CHECK(cudaLaunchKernel(l.fn, l.grid, l.block, args, 0, nullptr)); }, plan,
        keep);
  }
  run.out = dc.download();
  return run;
}

KernelResources matmul_resources(MatmulKernel kernel) {
  const KernelLaunch l = matmul_launch(kernel, 128, true);
  return gpulab::cuda::kernel_resources(l.fn, l.block);
}

HostPointerRun run_host_pointer_pitfall(std::size_t n) {
  open_device();  // device 0; no GPU: gpulab::Unsupported, exit 77
  HostPointerRun r;
  r.n = n;
  const char* blocking = std::getenv("CUDA_LAUNCH_BLOCKING");
  r.launch_blocking = blocking != nullptr && std::string(blocking) == "1";
  int pageable = 0;
  GPULAB_CUDA_CHECK(cudaDeviceGetAttribute(&pageable, cudaDevAttrPageableMemoryAccess, 0));
  r.pageable_access = pageable != 0;
  std::vector<float> host(n, 1.0f);
  const unsigned blocks = static_cast<unsigned>((n + 255) / 256);
  // The pitfall: a host address where the kernel expects a device one.
  scale_in_place<<<blocks, 256>>>(host.data(), static_cast<long long>(n), 2.0f);
  r.after_launch = cudaGetErrorName(cudaGetLastError());
  r.at_sync = cudaGetErrorName(cudaDeviceSynchronize());
  r.after_sync = cudaGetErrorName(cudaGetLastError());
  r.host_doubled = std::all_of(host.begin(), host.end(), [](float v) { return v == 2.0f; });
  return r;
}

}  // namespace kernels
