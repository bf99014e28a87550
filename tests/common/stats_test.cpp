#include "gpulab/stats.hpp"

#include <gtest/gtest.h>

#include <vector>

TEST(Stats, MedianOfOddAndEvenCounts) {
  EXPECT_DOUBLE_EQ(gpulab::median(std::vector<double>{3, 1, 2}), 2.0);
  EXPECT_DOUBLE_EQ(gpulab::median(std::vector<double>{4, 1, 3, 2}), 2.5);
}

TEST(Stats, PercentileInterpolatesLikeNumpy) {
  const std::vector<double> xs{1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  EXPECT_DOUBLE_EQ(gpulab::percentile(xs, 0), 1.0);
  EXPECT_DOUBLE_EQ(gpulab::percentile(xs, 100), 10.0);
  EXPECT_DOUBLE_EQ(gpulab::percentile(xs, 90), 9.1);  // numpy.percentile(range(1,11), 90)
  EXPECT_DOUBLE_EQ(gpulab::percentile(xs, 99), 9.91);
}

TEST(Stats, BadInputIsRejected) {
  EXPECT_THROW(gpulab::median(std::vector<double>{}), std::invalid_argument);
  EXPECT_THROW(gpulab::percentile(std::vector<double>{1}, 101), std::invalid_argument);
}

TEST(Stats, SummaryAndSampleStddev) {
  const std::vector<double> xs{2, 4, 4, 4, 5, 5, 7, 9};
  const auto s = gpulab::summarize(xs);
  EXPECT_EQ(s.count, 8u);
  EXPECT_DOUBLE_EQ(s.min, 2);
  EXPECT_DOUBLE_EQ(s.max, 9);
  EXPECT_DOUBLE_EQ(s.mean, 5);
  EXPECT_NEAR(s.stddev, 2.138089935, 1e-9);
  EXPECT_EQ(gpulab::summarize({}).count, 0u);
}
