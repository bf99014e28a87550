// The device as every CUDA lab's report shows it: one header line and one JSON object.
#include <gtest/gtest.h>

#include "gpulab/cuda/device_report.hpp"

namespace {

gpulab::cuda::DeviceInfo h200() {
  gpulab::cuda::DeviceInfo d;
  d.name = "NVIDIA H200";
  d.cc_major = 9;
  d.cc_minor = 0;
  d.sm_count = 132;
  d.driver_version = 13000;
  d.runtime_version = 12080;
  return d;
}

TEST(CudaDeviceReport, VersionNumbersReadAsMajorDotMinor) {
  EXPECT_EQ(gpulab::cuda::version_text(13000), "13.0");
  EXPECT_EQ(gpulab::cuda::version_text(12080), "12.8");
  EXPECT_EQ(gpulab::cuda::version_text(11040), "11.4");
}

TEST(CudaDeviceReport, LineAndJsonNameTheSameDevice) {
  EXPECT_EQ(gpulab::cuda::device_line(h200()),
            "device   NVIDIA H200 (sm_90, 132 SMs), driver 13.0, runtime 12.8\n");
  EXPECT_EQ(
      gpulab::cuda::device_json(h200()).dump(),
      R"({"name":"NVIDIA H200","compute_capability":"9.0","sms":132,"driver":"13.0","runtime":"12.8"})");
}

}  // namespace
