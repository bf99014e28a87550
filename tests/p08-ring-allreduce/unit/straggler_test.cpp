// Straggler detection: the robust score on chosen timings, its metrics, and
// forked ranks with one of them really slowed down.
#include "ring_allreduce/straggler.hpp"

#include <gtest/gtest.h>

#include <stdexcept>

#include "ring_allreduce/launcher.hpp"
#include "ring_allreduce/metrics_out.hpp"

namespace ring {
namespace {

TEST(DetectStragglers, NamesTheOneSlowRankThatAClassicZScoreCannotReach) {
  const std::vector<double> s{0.010, 0.0102, 0.0099, 0.050};
  const Detection d = detect_stragglers(s);
  EXPECT_EQ(d.stragglers, std::vector<int>{3});
  EXPECT_NEAR(d.median, 0.0101, 1e-12);
  EXPECT_NEAR(d.ranks[3].ratio, 0.050 / 0.0101, 1e-9);
  EXPECT_GE(d.ranks[3].score, kStragglerScore);
  // The outlier inflates the standard deviation it is measured against: with
  // 4 ranks no z-score can exceed (N-1)/sqrt(N) = 1.5.
  EXPECT_LE(d.ranks[3].z, 1.5 + 1e-12);
  for (int r : {0, 1, 2}) EXPECT_FALSE(d.ranks[static_cast<std::size_t>(r)].straggler) << r;
}

TEST(DetectStragglers, JitterOnIdenticalRanksIsNotAStraggler) {
  // Three ranks within 2% give MAD ~ 0: without the scale floor the 30% slower
  // rank would score ~19; it is an outlier, but not 2x the median.
  const Detection d = detect_stragglers(std::vector<double>{0.0100, 0.0101, 0.0102, 0.0130});
  EXPECT_TRUE(d.stragglers.empty());
  EXPECT_DOUBLE_EQ(d.scale, kScaleFloor * d.median);
  const Detection same = detect_stragglers(std::vector<double>{0.02, 0.02, 0.02});
  EXPECT_TRUE(same.stragglers.empty());
  EXPECT_EQ(same.ranks[0].score, 0.0);
}

TEST(DetectStragglers, FewerThanHalfTheRanksSlowAreAllNamed) {
  const Detection d = detect_stragglers(std::vector<double>{1, 1.05, 0.98, 5, 6});
  EXPECT_EQ(d.stragglers, (std::vector<int>{3, 4}));
}

TEST(DetectStragglers, NeedsThreeRanks) {
  EXPECT_THROW(detect_stragglers(std::vector<double>{1, 5}), std::invalid_argument);
}

TEST(StragglerMetrics, OneSeriesPerRankAndTheFlagOnTheStraggler) {
  const Detection d = detect_stragglers(std::vector<double>{0.01, 0.01, 0.05});
  const auto e = straggler_metrics(d, {0.04, 0.04, 0.001});
  const auto v = [&](const char* name, const char* rank) {
    return e.find(name)->find({{"rank", rank}})->value;
  };
  EXPECT_EQ(v("allreduce_straggler", "2"), 1.0);
  EXPECT_EQ(v("allreduce_straggler", "0"), 0.0);
  EXPECT_EQ(v("allreduce_step_compute_seconds", "2"), 0.05);
  EXPECT_EQ(v("allreduce_step_wait_seconds", "0"), 0.04);
  EXPECT_DOUBLE_EQ(v("allreduce_straggler_score", "2"), d.ranks[2].score);
  EXPECT_TRUE(gpulab::prom::parse(e.render())) << e.render();
}

// Real processes: rank 1 works 5x what its step measured; the others do not.
TEST(StragglerJob, ForkedRanksNameTheSlowedRankAndOnlyIt) {
  StragglerSpec spec;
  spec.count = 5'000;
  spec.steps = 8;
  spec.slow_rank = 1;
  spec.slow_factor = 5.0;
  LaunchOptions opts;
  opts.world = 4;
  const StepTimes st = fold_step_times(launch_local(opts, straggler_job(spec)));
  ASSERT_EQ(st.compute.size(), 4u);
  EXPECT_EQ(st.compute[1].size(), 8u);
  EXPECT_EQ(st.wrong, 0u);
  std::vector<double> med;
  for (const auto& c : st.compute) {
    std::vector<double> sorted = c;
    std::sort(sorted.begin(), sorted.end());
    med.push_back(sorted[sorted.size() / 2]);
  }
  EXPECT_EQ(detect_stragglers(med).stragglers, std::vector<int>{1});
}

}  // namespace
}  // namespace ring
