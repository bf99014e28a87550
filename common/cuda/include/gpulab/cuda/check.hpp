// The CUDA runtime's error discipline, shared by every lab with .cu files
// (the anchor is cuda-samples' helper_cuda.h checkCudaErrors): GPULAB_CUDA_CHECK(call)
// turns a failing runtime call into gpulab::RunError("CUDA error at file:line:
// call: message"). The throwing lives in check.cpp so nvcc never compiles CLI11.
// C++17: nvcc compiles the .cu files that include it with -std=c++17.
#pragma once

#include <string>

namespace gpulab::cuda {

[[noreturn]] void throw_cuda_error(const char* file, int line, const char* call, const std::string& message);
// gpulab::Unsupported("no CUDA device (<reason>)"): the program exits 77.
[[noreturn]] void throw_no_device(const std::string& reason);

}  // namespace gpulab::cuda

#define GPULAB_CUDA_CHECK(call)                                                                     \
  do {                                                                                              \
    const cudaError_t gpulab_err_ = (call);                                                         \
    if (gpulab_err_ != cudaSuccess)                                                                 \
      ::gpulab::cuda::throw_cuda_error(__FILE__, __LINE__, #call, cudaGetErrorString(gpulab_err_)); \
  } while (0)
