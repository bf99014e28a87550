#include <cuda_runtime.h>

#include "gpulab/cuda/check.hpp"
#include "gpulab/cuda/device_info.hpp"

namespace gpulab::cuda {

DeviceInfo open_device() {
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) throw_no_device(std::string("cudaGetDeviceCount: ") + cudaGetErrorString(err));
  if (count == 0) throw_no_device("cudaGetDeviceCount found 0 devices");
  GPULAB_CUDA_CHECK(cudaSetDevice(0));
  GPULAB_CUDA_CHECK(cudaFree(nullptr));  // creates the context now, not inside the first timing
  cudaDeviceProp prop{};
  GPULAB_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  DeviceInfo info;
  info.name = prop.name;
  info.cc_major = prop.major;
  info.cc_minor = prop.minor;
  info.sm_count = prop.multiProcessorCount;
  GPULAB_CUDA_CHECK(cudaDriverGetVersion(&info.driver_version));
  GPULAB_CUDA_CHECK(cudaRuntimeGetVersion(&info.runtime_version));
  return info;
}

}  // namespace gpulab::cuda
