#include "gpulab/number_format.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

namespace {

TEST(WithCommas, GroupsByThreeFromTheRight) {
  EXPECT_EQ(gpulab::with_commas(0), "0");
  EXPECT_EQ(gpulab::with_commas(999), "999");
  EXPECT_EQ(gpulab::with_commas(1000), "1,000");
  EXPECT_EQ(gpulab::with_commas(12345), "12,345");
  EXPECT_EQ(gpulab::with_commas(123456), "123,456");
  EXPECT_EQ(gpulab::with_commas(1234567), "1,234,567");
}

TEST(WithCommas, LargestValue) {
  EXPECT_EQ(gpulab::with_commas(std::numeric_limits<std::uint64_t>::max()), "18,446,744,073,709,551,615");
}

}  // namespace
