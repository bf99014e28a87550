#include "membench/plateaus.hpp"

#include <gtest/gtest.h>

#include "membench/sizes.hpp"

namespace membench {
namespace {

CacheTopology topo(std::size_t l1, std::size_t l2, std::size_t l3) {
  CacheTopology t;
  t.data_levels = {{1, l1, 64, "0"}, {2, l2, 64, "0"}, {3, l3, 64, "0-1"}};
  t.source = "test";
  return t;
}

// A textbook curve: 1 ns in L1 (32 KiB), 4 ns in L2 (1 MiB), 12 ns in L3 (32 MiB), 90 ns beyond.
std::vector<double> textbook(const std::vector<std::size_t>& sizes) {
  std::vector<double> ns;
  for (auto b : sizes)
    ns.push_back(b <= (32 << 10) ? 1.0 : b <= (1 << 20) ? 4.0 : b <= (32 << 20) ? 12.0 : 90.0);
  return ns;
}

TEST(DetectPlateaus, FindsTheFourLevelsOfATextbookCurve) {
  const auto sizes = sweep_sizes(4 << 10, 256 << 20, 1);
  const auto p = detect_plateaus(sizes, textbook(sizes));
  ASSERT_EQ(p.size(), 4U);
  EXPECT_EQ(p[0].last_bytes, 32U << 10);
  EXPECT_EQ(p[1].first_bytes, 64U << 10);
  EXPECT_EQ(p[1].last_bytes, 1U << 20);
  EXPECT_EQ(p[2].last_bytes, 32U << 20);
  EXPECT_DOUBLE_EQ(p[0].ns, 1.0);
  EXPECT_DOUBLE_EQ(p[3].ns, 90.0);
  for (const auto& c : compare_plateaus(topo(32 << 10, 1 << 20, 32 << 20), p))
    EXPECT_TRUE(c.agree) << c.level;
}

TEST(DetectPlateaus, AGradualClimbIsOneCliffAndNoiseIsNot) {
  const std::vector<std::size_t> sizes = {1, 2, 4, 8, 16, 32, 64, 128};
  // 3% noise on the first plateau, then a climb spread over three steps.
  const std::vector<double> ns = {1.0, 1.03, 0.99, 1.02, 2.0, 5.0, 9.0, 9.2};
  const auto p = detect_plateaus(sizes, ns);
  ASSERT_EQ(p.size(), 2U);
  EXPECT_EQ(p[0].last_bytes, 8U);
  EXPECT_EQ(p[1].first_bytes, 64U);
}

TEST(ComparePlateaus, ReportsWhereCurveAndSysfsDisagree) {
  const auto sizes = sweep_sizes(4 << 10, 256 << 20, 1);
  // sysfs claims a 4x larger L2 and a 64x smaller L3 than the curve shows.
  const auto cmp =
      compare_plateaus(topo(32 << 10, 4 << 20, 512 << 10), detect_plateaus(sizes, textbook(sizes)));
  ASSERT_EQ(cmp.size(), 3U);
  EXPECT_TRUE(cmp[0].agree);
  EXPECT_FALSE(cmp[1].agree);
  EXPECT_NE(cmp[1].note.find("disagree"), std::string::npos);
  EXPECT_FALSE(cmp[2].agree);
}

TEST(ComparePlateaus, AFlatCurveHasNoCliffForAnyLevel) {
  const std::vector<std::size_t> sizes = {4096, 8192, 16384};
  const std::vector<double> ns = {1.0, 1.0, 1.05};
  const auto cmp = compare_plateaus(topo(32 << 10, 1 << 20, 32 << 20), detect_plateaus(sizes, ns));
  ASSERT_EQ(cmp.size(), 3U);
  for (const auto& c : cmp) {
    EXPECT_FALSE(c.agree);
    EXPECT_EQ(c.curve_bytes, 0U);
  }
}

TEST(ComparePlateaus, ACliffBeyondTheLastLevelIsExtra) {
  const std::vector<std::size_t> sizes = {1, 2, 4, 8};
  const std::vector<double> ns = {1, 5, 25, 125};
  CacheTopology t;
  t.data_levels = {{1, 1, 64, ""}};
  const auto cmp = compare_plateaus(t, detect_plateaus(sizes, ns));
  ASSERT_EQ(cmp.size(), 1U);  // 1 -> 125 is one long climb: one cliff
  EXPECT_TRUE(cmp[0].agree);
}

}  // namespace
}  // namespace membench
