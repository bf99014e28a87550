// A CUDA event that destroys itself: the timing bracket of every kernel the
// labs measure. For .cu files.
#pragma once

#include <cuda_runtime.h>

#include "gpulab/cuda/check.hpp"

namespace gpulab::cuda {

class Event {
 public:
  Event() { GPULAB_CUDA_CHECK(cudaEventCreate(&ev_)); }
  ~Event() { cudaEventDestroy(ev_); }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  cudaEvent_t get() const { return ev_; }

 private:
  cudaEvent_t ev_{};
};

}  // namespace gpulab::cuda
