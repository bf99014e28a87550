#include "kernels/tolerance.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

using namespace kernels;

TEST(Tolerance, RelativeOneInAThousand) {
  EXPECT_TRUE(close_enough(1000.9f, 1000.0f, {}));
  EXPECT_FALSE(close_enough(1001.5f, 1000.0f, {}));
  EXPECT_TRUE(close_enough(0.0f, 0.0f, {}));
  EXPECT_FALSE(close_enough(std::nanf(""), std::nanf(""), {}));
  EXPECT_TRUE(close_enough(std::numeric_limits<float>::infinity(),
                           std::numeric_limits<float>::infinity(), {}));
}

TEST(Tolerance, ReportsCountAndFirstMismatch) {
  const std::vector<float> want{1, 2, 3, 4};
  const std::vector<float> got{1, 2.5f, 3, 5};
  const CloseReport r = check_close(got, want);
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.mismatches, 2u);
  EXPECT_EQ(r.first_bad, 1u);
  EXPECT_NEAR(r.max_rel_error, 0.25, 1e-12);
  EXPECT_EQ(describe(r, got, want), "FAIL: 2 of 4 differ (first at [1]: got 2.5, want 2)");
}

TEST(Tolerance, PassesRoundingNoiseAndFailsSizeMismatch) {
  const std::vector<float> want{1, 2, 3};
  const std::vector<float> got{1.0001f, 1.9999f, 3};
  EXPECT_TRUE(check_close(got, want).ok());
  EXPECT_FALSE(check_close(std::vector<float>{1, 2}, want).ok());
  EXPECT_FALSE(check_close(std::vector<float>{}, std::vector<float>{})
                   .ok());  // nothing checked is not a pass
}

TEST(Tolerance, CanaryCountsOutOfBoundsWrites) {
  std::vector<float> slack(10, -1.0f);
  EXPECT_EQ(canary_overwrites(slack, -1.0f), 0u);
  slack[0] = 0.5f;
  slack[3] = 1.5f;
  EXPECT_EQ(canary_overwrites(slack, -1.0f), 2u);
}
