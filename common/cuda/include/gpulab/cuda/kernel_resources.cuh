// The resources of a __global__ function launched with `block` threads, on the current
// device: cudaFuncGetAttributes for registers and memory, the occupancy calculator for
// resident blocks. For .cu files.
#pragma once

#include <cuda_runtime.h>

#include "gpulab/cuda/check.hpp"
#include "gpulab/cuda/kernel_resources.hpp"

namespace gpulab::cuda {

inline KernelResources kernel_resources(const void* fn, dim3 block) {
  cudaFuncAttributes attr{};
  GPULAB_CUDA_CHECK(cudaFuncGetAttributes(&attr, fn));
  KernelResources r;
  r.registers = attr.numRegs;
  r.local_bytes = attr.localSizeBytes;
  r.static_smem_bytes = attr.sharedSizeBytes;
  r.threads_per_block = static_cast<int>(block.x * block.y * block.z);
  GPULAB_CUDA_CHECK(
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&r.blocks_per_sm, fn, r.threads_per_block, 0));
  int device = 0, max_threads = 0;
  GPULAB_CUDA_CHECK(cudaGetDevice(&device));
  GPULAB_CUDA_CHECK(
      cudaDeviceGetAttribute(&max_threads, cudaDevAttrMaxThreadsPerMultiProcessor, device));
  r.occupancy = max_threads > 0
                    ? static_cast<double>(r.blocks_per_sm * r.threads_per_block) / max_threads
                    : 0.0;
  return r;
}

}  // namespace gpulab::cuda
