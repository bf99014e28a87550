#include "membench/sizes.hpp"

#include <gtest/gtest.h>

namespace membench {
namespace {

TEST(ParseSize, AcceptsBinaryUnits) {
  EXPECT_EQ(parse_size("4096").value(), 4096U);
  EXPECT_EQ(parse_size("4K").value(), 4096U);
  EXPECT_EQ(parse_size("4KiB").value(), 4096U);
  EXPECT_EQ(parse_size("4kb").value(), 4096U);
  EXPECT_EQ(parse_size("256M").value(), 256U << 20);
  EXPECT_EQ(parse_size("1G").value(), 1U << 30);
}

TEST(ParseSize, RejectsWhatIsNotASize) {
  for (const char* bad :
       {"", "abc", "4X", "-4K", "K", "0", "4 K", "99999999999999999999", "17179869184G"}) {
    const auto r = parse_size(bad);
    EXPECT_FALSE(r.ok()) << bad;
    if (!r.ok()) {
      EXPECT_NE(r.error().message.find("not a size"), std::string::npos);
    }
  }
}

TEST(FormatSize, PicksTheLargestWholeUnit) {
  EXPECT_EQ(format_size(4096), "4 KiB");
  EXPECT_EQ(format_size(256U << 20), "256 MiB");
  EXPECT_EQ(format_size(1536U << 10), "1.5 MiB");
  EXPECT_EQ(format_size(100), "100 B");
}

TEST(SweepSizes, PowersOfTwoFrom4KiBTo256MiBAre17Points) {
  const auto s = sweep_sizes(4 << 10, 256 << 20, 1);
  ASSERT_EQ(s.size(), 17U);
  EXPECT_EQ(s.front(), 4096U);
  EXPECT_EQ(s.back(), 256U << 20);
  for (std::size_t i = 1; i < s.size(); ++i) EXPECT_EQ(s[i], 2 * s[i - 1]);
}

TEST(SweepSizes, StepsPerDoublingAddPointsInBetweenOnWholeLines) {
  const auto s = sweep_sizes(4 << 10, 16 << 10, 2);
  ASSERT_EQ(s.size(), 5U);  // 4K, ~5.7K, 8K, ~11.3K, 16K
  for (auto b : s) EXPECT_EQ(b % 64, 0U);
  EXPECT_TRUE(sweep_sizes(8 << 10, 4 << 10, 1).empty());
}

}  // namespace
}  // namespace membench
