// Error discipline for the .cu file without pulling CLI11 into nvcc (the
// throwing lives in cuda_error.cpp): GPULAB_CUDA_CHECK(call) turns a failing
// runtime call into gpulab::RunError("CUDA error at file:line: call: message").
#pragma once

#include <string>

namespace coalescing {

[[noreturn]] void throw_cuda_error(const char* file, int line, const char* call,
                                   const std::string& message);
[[noreturn]] void throw_no_device(const std::string& reason);

}  // namespace coalescing

#define GPULAB_CUDA_CHECK(call)                                                                   \
  do {                                                                                            \
    const cudaError_t gpulab_err_ = (call);                                                       \
    if (gpulab_err_ != cudaSuccess)                                                               \
      ::coalescing::throw_cuda_error(__FILE__, __LINE__, #call, cudaGetErrorString(gpulab_err_)); \
  } while (0)
