// --metrics-out: serving histograms and request counters from simulated runs.
#include "batching/metrics_out.hpp"

#include <gtest/gtest.h>

#include <algorithm>

namespace batching {
namespace {

TEST(ServingMetricsOut, BucketsIncludeBothSloThresholds) {
  const auto b = latency_buckets_seconds();
  EXPECT_NE(std::find(b.begin(), b.end(), 0.3), b.end());
  EXPECT_NE(std::find(b.begin(), b.end(), 0.04), b.end());
  EXPECT_TRUE(std::is_sorted(b.begin(), b.end()));
}

TEST(ServingMetricsOut, CountsEveryRequestAndObservesOnlyServedOnes) {
  // arrival, prompt, output ; served, first token, finish
  const std::vector<Request> reqs{{0, 100, 11}, {0, 100, 11}, {0, 100, 1}, {0, 100, 11}};
  const std::vector<Outcome> outs{{true, 100, 100 + 10 * 20, 0, 0},  // TTFT 0.1 s, TPOT 20 ms: good
                                  {true, 500, 500 + 10 * 20, 0, 0},  // TTFT 0.5 s: misses TTFT
                                  {true, 50, 50, 0, 0},  // one token: no TPOT observation, good
                                  {false, 0, 0, 0, 0}};  // shed: counted, not observed
  ServingMetrics sm;
  sm.add_run("p", reqs, outs, Slo{});
  const auto& e = sm.exposition();
  const gpulab::prom::Labels l{{"policy", "p"}};
  EXPECT_EQ(e.find("serving_requests_total")->find(l)->value, 4.0);
  EXPECT_EQ(e.find("serving_good_requests_total")->find(l)->value, 2.0);
  const auto* ttft = e.find("serving_ttft_seconds");
  const auto& bounds = ttft->upper_bounds();
  const auto at = [&](const gpulab::prom::Family* f, double le) {
    const auto i =
        static_cast<std::size_t>(std::find(bounds.begin(), bounds.end(), le) - bounds.begin());
    return f->find(l)->cumulative[i];
  };
  EXPECT_EQ(ttft->find(l)->cumulative.back(), 3.0);  // served requests
  EXPECT_EQ(at(ttft, 0.3), 2.0);                     // 0.1 s and 0.05 s
  const auto* tpot = e.find("serving_tpot_seconds");
  EXPECT_EQ(tpot->find(l)->cumulative.back(), 2.0);  // the one-token output has no TPOT
  EXPECT_EQ(at(tpot, 0.04), 2.0);
  EXPECT_TRUE(gpulab::prom::parse(e.render())) << e.render();
}

TEST(ServingMetricsOut, PrefixHitRatioIsHitsOverLookups) {
  ServingMetrics sm;
  sm.add_prefix_cache("warm", PrefixKvStats{200, 150, 3});
  sm.add_prefix_cache("none", PrefixKvStats{0, 0, 0});
  const auto* f = sm.exposition().find("kv_cache_prefix_hit_ratio");
  EXPECT_EQ(f->find({{"policy", "warm"}})->value, 0.75);
  EXPECT_EQ(f->find({{"policy", "none"}})->value, 0.0);
}

}  // namespace
}  // namespace batching
