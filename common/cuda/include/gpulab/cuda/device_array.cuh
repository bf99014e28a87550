// A cudaMalloc'd array that frees itself, with checked copies to and from a
// host vector. For .cu files (needs the CUDA runtime header).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <vector>

#include "gpulab/cuda/check.hpp"

namespace gpulab::cuda {

template <class T>
class DeviceArray {
 public:
  explicit DeviceArray(std::size_t count) : count_(count) { GPULAB_CUDA_CHECK(cudaMalloc(&ptr_, count * sizeof(T))); }
  ~DeviceArray() { cudaFree(ptr_); }  // a failure here cannot be reported usefully
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
  T* get() const { return ptr_; }
  std::size_t size() const { return count_; }
  void upload(const std::vector<T>& host) {
    GPULAB_CUDA_CHECK(cudaMemcpy(ptr_, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice));
  }
  std::vector<T> download() const {
    std::vector<T> host(count_);
    GPULAB_CUDA_CHECK(cudaMemcpy(host.data(), ptr_, count_ * sizeof(T), cudaMemcpyDeviceToHost));
    return host;
  }

 private:
  T* ptr_ = nullptr;
  std::size_t count_;
};

}  // namespace gpulab::cuda
