// ptxc's PTX on a real GPU (driver API) against the interpreter, bit for bit.
// Skips with the reason on machines without a driver or a GPU.
#include "ptxc/device_run.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <gpulab/errors.hpp>

#include "ptxc/suite.hpp"
#include "test_util.hpp"

TEST(DeviceRun, SuiteOnTheGpuMatchesTheInterpreterBitForBit) {
  const auto c = ptxc_test::compile_at(ptxc::builtin_suite_source(), 1);
  const auto m = ptxc::ptx::parse_ptx(c.ptx);
  for (const auto& k : c.program.kernels) {
    const auto inputs = ptxc::random_inputs(k.params, 1000, 5);
    ptxc::DeviceRun gpu;
    try {
      gpu = ptxc::run_on_device(c.ptx, k.name, k.params, inputs, 1000, 128);
    } catch (const gpulab::Unsupported& e) {
      GTEST_SKIP() << e.what();
    }
    const auto interp = ptxc::run_ptx(*m.find(k.name), k.params, inputs, 1000, 128);
    for (std::size_t p = 0; p < k.params.size(); ++p)
      for (std::size_t i = 0; i < interp.buffers[p].size(); ++i)
        ASSERT_EQ(std::bit_cast<std::uint32_t>(gpu.buffers[p][i]),
                  std::bit_cast<std::uint32_t>(interp.buffers[p][i]))
            << k.name << " " << k.params[p].name << "[" << i << "] on " << gpu.device;
  }
}
