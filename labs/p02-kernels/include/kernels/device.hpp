// The GPU side of the lab, behind plain std types so the host code (and the
// build without CUDA) never includes a CUDA header. Implemented by
// src/device_kernels.cu, or by src/device_unavailable.cpp when the build has
// no CUDA compiler. Every call that needs a GPU throws gpulab::Unsupported
// ("no CUDA device (...)") when there is none, and gpulab::RunError naming the
// file and line of any failing CUDA call.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "gpulab/cuda/device_info.hpp"
#include "gpulab/cuda/kernel_resources.hpp"
#include "kernels/matmul_model.hpp"

namespace kernels {

using gpulab::cuda::DeviceInfo;
using gpulab::cuda::open_device;

struct TimingPlan {
  int warmup = 1;
  int reps = 5;
};

struct TimedRun {
  std::vector<float> out;                     // the device's result (last timed repetition)
  std::vector<std::vector<float>> every_out;  // one per timed repetition, when asked for
  std::vector<double> event_ms;               // CUDA-event time of each timed repetition
  double chrono_enqueue_ms = 0;  // std::chrono around an async launch, no sync: the lie
};

// Device-to-device copy kernel over `bytes`: the bandwidth ceiling vec_add is compared with.
TimedRun run_copy(std::size_t bytes, const TimingPlan& plan);

// c[i] = a[i] + b[i] for i < n with 256-thread blocks and a ceil-div grid.
// a, b and the returned out have the same length >= n. Slack after n holds
// `canary` in out, so an unguarded tail's writes are counted instead of being
// undefined behaviour; without slack they really go out of bounds.
TimedRun run_vec_add(const std::vector<float>& a, const std::vector<float>& b, std::size_t n,
                     float canary, bool tail_guard, const TimingPlan& plan);

struct MatmulOptions {
  bool drop_second_sync = false;  // the guided breakage of the tiled kernel
  bool keep_every_output = false;
};
// C = A * B, row-major n x n; n must be a multiple of 128 (the largest tile).
TimedRun run_matmul(MatmulKernel kernel, const std::vector<float>& a, const std::vector<float>& b,
                    int n, const TimingPlan& plan, const MatmulOptions& opts = {});

// What the loaded binary says about a kernel (cudaFuncGetAttributes and the occupancy API).
using gpulab::cuda::KernelResources;
// Not available for kCublas (throws std::invalid_argument).
KernelResources matmul_resources(MatmulKernel kernel);

// The host-pointer pitfall (--pitfall host-pointer): scale_in_place, a kernel
// that doubles n floats in place, launched with the address of a host
// std::vector instead of a device buffer. Nothing at build time can tell: a
// kernel's pointer parameter is just an address, and ptxas compiles the loads
// and stores as global-memory accesses either way. What happens is read from
// the runtime, at each call that can report it:
struct HostPointerRun {
  std::size_t n = 0;
  bool launch_blocking = false;  // CUDA_LAUNCH_BLOCKING=1: every launch waits for its kernel
  bool pageable_access = false;  // cudaDevAttrPageableMemoryAccess: the GPU may read malloc'd memory (HMM/ATS)
  std::string after_launch;      // cudaGetLastError() right after the <<<>>> launch (an error name)
  std::string at_sync;           // cudaDeviceSynchronize(), the first call that waits for the kernel
  std::string after_sync;        // cudaGetLastError() once more: a sticky error is still there
  bool host_doubled = false;     // every host element was doubled (the kernel did reach host memory)
};
HostPointerRun run_host_pointer_pitfall(std::size_t n);

}  // namespace kernels
