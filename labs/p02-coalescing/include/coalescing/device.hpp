// The GPU side of coalescing-bench behind plain std types (nvcc compiles the
// .cu as C++17; the host library never includes a CUDA header). Implemented
// by src/device_bench.cu, or src/device_unavailable.cpp in a build without
// CUDA. Throws gpulab::Unsupported("no CUDA device (...)") without a GPU and
// gpulab::RunError naming file and line when a CUDA call fails.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "gpulab/cuda/device_info.hpp"

namespace coalescing {

using gpulab::cuda::DeviceInfo;
using gpulab::cuda::open_device;

struct Measured {
  std::vector<double> event_ms;  // one per timed repetition (CUDA events)
  bool verified = false;         // the output matched the host's expectation exactly
  std::string mismatch;          // the first difference, when not verified
  int registers = 0;             // cudaFuncGetAttributes
  int threads_per_block = 0;
  int blocks_per_sm = 0;  // cudaOccupancyMaxActiveBlocksPerMultiprocessor
  double occupancy = 0;   // resident warps / the SM's maximum
};

struct Plan {
  int warmup = 1;
  int reps = 10;
};

// out[i*s] = in[i*s] for i < floats / s, over buffers of `floats` floats.
Measured run_strided_copy(std::size_t floats, int stride, const Plan& plan);
// out4[i] = in4[i] with float4 loads and stores over `floats` floats.
Measured run_float4_copy(std::size_t floats, const Plan& plan);

// Sum of the x field of `points` {x, y, z} points, stored as an array of
// structs or as a separate x array; each warp writes one partial sum.
enum class Layout { kAoS, kSoA };
Measured run_field_sum(Layout layout, std::size_t points, const Plan& plan);

enum class Transpose { kCopy, kNaive, kTiled, kPadded, kPaddedCpAsync, kPaddedBounds1024 };
// n x n floats, n a multiple of 32; verified elementwise against the host.
Measured run_transpose(Transpose kind, int n, const Plan& plan);

}  // namespace coalescing
