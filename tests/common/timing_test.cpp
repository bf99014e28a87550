#include "gpulab/timing.hpp"

#include <gtest/gtest.h>

TEST(Timing, RunsWarmupPlusRepetitionsAndOrdersStatistics) {
  int calls = 0;
  const auto r = gpulab::time_repeated([&] { ++calls; }, 3, 7);
  EXPECT_EQ(calls, 10);
  ASSERT_EQ(r.seconds.size(), 7u);
  EXPECT_LE(r.min, r.median);
  EXPECT_GE(r.min, 0.0);
}
