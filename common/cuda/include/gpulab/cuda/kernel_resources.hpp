// What the compiler and the occupancy calculator say about one kernel at one block size, in
// plain std types so host code can hold it (kernel_resources.cuh measures it).
#pragma once

#include <cstddef>

namespace gpulab::cuda {

struct KernelResources {
  int registers = 0;
  std::size_t local_bytes = 0;  // per-thread local memory: spills live here
  std::size_t static_smem_bytes = 0;
  int threads_per_block = 0;
  int blocks_per_sm = 0;  // cudaOccupancyMaxActiveBlocksPerMultiprocessor
  double occupancy = 0;   // resident warps / the SM's maximum
};

}  // namespace gpulab::cuda
