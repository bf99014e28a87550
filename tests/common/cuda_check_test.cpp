// gpulab::cuda's error discipline: a failing runtime call names the source
// file (not its full path), the line, the call and CUDA's message; no device
// is "Unsupported" (exit 77), never a crash.
#include <gtest/gtest.h>

#include <string>

#include "gpulab/errors.hpp"
#include "gpulab/cuda/check.hpp"
#include "gpulab/cuda/device_info.hpp"

namespace {

TEST(CudaCheck, ErrorNamesFileLineCallAndMessage) {
  try {
    gpulab::cuda::throw_cuda_error("/deep/path/to/kernels.cu", 42, "cudaMalloc(&p, n)", "out of memory");
    FAIL() << "did not throw";
  } catch (const gpulab::RunError& e) {
    EXPECT_EQ(std::string(e.what()), "CUDA error at kernels.cu:42: cudaMalloc(&p, n): out of memory");
  }
}

TEST(CudaCheck, NoDeviceIsUnsupported) {
  try {
    gpulab::cuda::throw_no_device("cudaGetDeviceCount found 0 devices");
    FAIL() << "did not throw";
  } catch (const gpulab::Unsupported& e) {
    EXPECT_EQ(std::string(e.what()), "no CUDA device (cudaGetDeviceCount found 0 devices)");
  }
}

// On a machine without a GPU (or a build without nvcc) opening the device says
// why in the Unsupported form; with one, it names the device.
TEST(CudaCheck, OpenDeviceNamesTheDeviceOrWhyNot) {
  try {
    const auto info = gpulab::cuda::open_device();
    EXPECT_FALSE(info.name.empty());
    EXPECT_GT(info.sm_count, 0);
  } catch (const gpulab::Unsupported& e) {
    EXPECT_EQ(std::string(e.what()).rfind("no CUDA device (", 0), 0u) << e.what();
  }
}

}  // namespace
