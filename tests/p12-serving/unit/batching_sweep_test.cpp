// The rate search of batching-sweep, against p99 TTFT curves whose answer is known.
#include "serving/batching_sweep.hpp"

#include <gtest/gtest.h>

#include <stdexcept>

namespace {

using serving::search_rate;

TEST(RateSearch, DoublesThenBisectsBelowTheFirstFailure) {
  // p99 TTFT grows as 10 ms x speed: the target of 100 ms holds up to speed 10.
  std::vector<double> asked;
  const auto r = search_rate(
      [&](double s) {
        asked.push_back(s);
        return 10 * s;
      },
      100, 1, 64, 3);
  // 1, 2, 4, 8 hold; 16 fails; three bisections between 8 and 16.
  ASSERT_EQ(asked.size(), 8u);
  EXPECT_EQ(asked[4], 16);
  ASSERT_TRUE(r.highest);
  EXPECT_LE(*r.highest, 10.0);
  EXPECT_GT(*r.highest, 9.0);
  EXPECT_FALSE(r.capped);
  for (const auto& p : r.probes) EXPECT_EQ(p.sustained, p.p99_ttft_ms <= 100) << p.speed;
}

TEST(RateSearch, AModeThatHoldsEverywhereIsCappedAtTheHighestSpeed) {
  const auto r = search_rate([](double) { return 1.0; }, 100, 3, 20, 2);
  ASSERT_TRUE(r.highest);
  EXPECT_EQ(*r.highest, 20);  // 3, 6, 12, then 20 (not 24)
  EXPECT_TRUE(r.capped);
  EXPECT_EQ(r.probes.size(), 4u);
}

TEST(RateSearch, AModeThatFailsAtTheLowestSpeedHasNoRate) {
  const auto r = search_rate([](double) { return 1e9; }, 100, 1, 64, 2);
  EXPECT_FALSE(r.highest);
  EXPECT_EQ(r.probes.size(), 1u);
}

TEST(RateSearch, ANoisyPassAboveAFailureIsNotTrusted) {
  // Fails at 4 but "passes" at 8 (noise): the answer stays below 4.
  const auto r = search_rate([](double s) { return s == 4 ? 200.0 : 10.0; }, 100, 1, 64, 0);
  ASSERT_TRUE(r.highest);
  EXPECT_EQ(*r.highest, 2);
}

TEST(RateSearch, RefusesImpossibleSpeeds) {
  auto flat = [](double) { return 1.0; };
  EXPECT_THROW(search_rate(flat, 100, 0, 4, 1), std::invalid_argument);
  EXPECT_THROW(search_rate(flat, 100, 8, 4, 1), std::invalid_argument);
}

}  // namespace
