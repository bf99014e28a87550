// What a container needs to reach one device, shared by the platform's agent
// and the device plugin's --inventory mode.
#include "gpulab/inventory/device_access.hpp"

#include <gtest/gtest.h>

namespace inv = gpulab::inventory;

TEST(DeviceAccess, OrdinalIsTheNumberAfterTheLastColon) {
  EXPECT_EQ(inv::backend_ordinal("cuda:3"), 3);
  EXPECT_EQ(inv::backend_ordinal("cpu_ref:12"), 12);
  EXPECT_EQ(inv::backend_ordinal("GPU-0"), 0);
  EXPECT_EQ(inv::backend_ordinal("cuda:x"), 0);
  EXPECT_EQ(inv::backend_ordinal("cuda:-1"), 0);
  EXPECT_EQ(inv::backend_ordinal("cuda:99999999999999999999"), 0);
}

TEST(DeviceAccess, CudaGetsItsNodeAndTheControlNodesCpuBackendsNone) {
  EXPECT_EQ(inv::device_files("cuda", 2),
            (std::vector<std::string>{"/dev/nvidia2", "/dev/nvidiactl", "/dev/nvidia-uvm",
                                      "/dev/nvidia-uvm-tools"}));
  EXPECT_EQ(inv::device_files("fakegpu", 0), std::vector<std::string>{"/dev/fakegpu"});
  for (const char* cpu : {"cpu_ref", "fast", "blas", "opencl"})
    EXPECT_TRUE(inv::device_files(cpu, 0).empty()) << cpu;
}

TEST(DeviceAccess, OnlyCudaHasAVisibleDevicesVariable) {
  EXPECT_EQ(inv::visible_devices_variable("cuda"), "CUDA_VISIBLE_DEVICES");
  EXPECT_EQ(inv::visible_devices_variable("fast"), "");
}
