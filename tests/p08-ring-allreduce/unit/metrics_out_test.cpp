// --metrics-out: the byte-count run's per-rank collective metrics.
#include <gtest/gtest.h>

#include "ring_allreduce/metrics_out.hpp"

namespace ring {
namespace {

RankOutcome ok(int rank, std::uint64_t bytes, double seconds) {
  RankOutcome o;
  o.rank = rank;
  o.status = RankOutcome::Status::kOk;
  o.report = {{"ring_bytes", bytes}, {"ring_seconds", seconds}};
  return o;
}

RankOutcome failed(int rank, std::string error, double seconds) {
  RankOutcome o;
  o.rank = rank;
  o.status = RankOutcome::Status::kFailed;
  o.error = std::move(error);
  o.seconds = seconds;
  return o;
}

TEST(HeadlineMetrics, OneSeriesPerReportingRankAndNoneForTheDead) {
  RankOutcome dead;
  dead.rank = 2;
  dead.status = RankOutcome::Status::kDied;
  const std::vector<RankOutcome> ranks{ok(0, 960000, 0.25),
                                       failed(1,
                                              "watchdog: no progress for 500 ms in all-gather step "
                                              "1 (waiting on rank 2); culprit: rank 2",
                                              0.52),
                                       dead, failed(3, "connect to rank 0 refused", 0.1)};
  const auto e = headline_metrics(ranks);
  const auto v = [&](const char* name, const char* rank) -> std::optional<double> {
    const auto* s = e.find(name)->find({{"rank", rank}});
    return s ? std::optional<double>(s->value) : std::nullopt;
  };
  EXPECT_EQ(v("allreduce_operations_total", "0"), 1.0);
  EXPECT_EQ(v("allreduce_timeouts_total", "0"), 0.0);
  EXPECT_EQ(v("allreduce_bytes_total", "0"), 960000.0);
  EXPECT_EQ(v("allreduce_seconds_total", "0"), 0.25);
  EXPECT_EQ(v("allreduce_timeouts_total", "1"), 1.0);             // the watchdog fired
  EXPECT_EQ(v("allreduce_seconds_total", "1"), 0.52);             // until it gave up
  EXPECT_EQ(v("allreduce_bytes_total", "1"), std::nullopt);       // its report is lost
  EXPECT_EQ(v("allreduce_operations_total", "2"), std::nullopt);  // dead: nothing
  EXPECT_EQ(v("allreduce_timeouts_total", "3"), 0.0);             // failed, but not a timeout
  EXPECT_TRUE(timed_out(ranks[1]));
  EXPECT_FALSE(timed_out(ranks[3]));
  EXPECT_TRUE(gpulab::prom::parse(e.render())) << e.render();
}

}  // namespace
}  // namespace ring
