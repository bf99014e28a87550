#include "kernels/launch_config.hpp"

#include <gtest/gtest.h>

using namespace kernels;

TEST(LaunchConfig, ImageFilterInterviewQuestion) {
  // 1920x1080 with 16x16 blocks: 1080/16 = 67.5 rounds up, the last block row hangs off the edge.
  const LaunchConfig cfg = launch_2d(1920, 1080, 16, 16);
  EXPECT_EQ(cfg.grid, (Dim3{120, 68, 1}));
  EXPECT_EQ(cfg.block, (Dim3{16, 16, 1}));
  EXPECT_EQ(idle_tail_threads(cfg, 1920ull * 1080), 120ull * 68 * 256 - 1920ull * 1080);
  EXPECT_EQ(launch_problem(cfg), "");
}

TEST(LaunchConfig, CeilDivLeavesATailForTheGuard) {
  const std::uint64_t n = (1u << 20) + 3;  // the breakage size; 1<<20+3 would be 1<<23, no tail
  const LaunchConfig cfg = launch_1d(n, 256);
  EXPECT_EQ(cfg.grid.x, 4097u);
  EXPECT_EQ(idle_tail_threads(cfg, n), 253u);
  EXPECT_EQ(idle_tail_threads(launch_1d(1u << 23, 256), 1u << 23), 0u);
}

TEST(LaunchConfig, CeilDiv) {
  EXPECT_EQ(ceil_div(0, 256), 0u);
  EXPECT_EQ(ceil_div(1, 256), 1u);
  EXPECT_EQ(ceil_div(256, 256), 1u);
  EXPECT_EQ(ceil_div(257, 256), 2u);
}

TEST(LaunchConfig, ReportsWhatTheHardwareRejects) {
  EXPECT_NE(launch_problem(launch_1d(4096, 2048)), "");              // over 1,024 threads per block
  EXPECT_NE(launch_problem(launch_2d(16, 70000 * 16, 16, 16)), "");  // grid.y over 65,535
  EXPECT_NE(launch_problem(launch_1d(0, 256)), "");                  // empty
  EXPECT_EQ(launch_problem(launch_1d(1ull << 31, 1024)), "");        // grid.x may be large
}
