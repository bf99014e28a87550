#include <gtest/gtest.h>

#include "simt/divergence_report.hpp"
#include "simt/latency_hiding.hpp"
#include "simt/report_output.hpp"

TEST(Report, TableIsTheCurriculumsByteForByte) {
  const auto report = simt::run_divergence_report({});
  EXPECT_EQ(simt::render_divergence_table(report),
            "kernel            issues   util%  slowdown\n"
            "uniform                6   100.0     1.00x\n"
            "warp_uniform           7   100.0     1.17x\n"
            "even_odd              10    70.0     1.67x\n"
            "max_divergent        226    58.4    37.67x\n");
  EXPECT_TRUE(report.all_passed());
}

TEST(Report, PitfallMakesTheReportFailAndSaysWhere) {
  simt::Config c;
  c.pitfalls.reconverge_at_target = true;
  const auto report = simt::run_divergence_report(c);
  EXPECT_FALSE(report.all_passed());
  const auto& k = report.get("even_odd");
  EXPECT_FALSE(k.passed());
  EXPECT_EQ(k.check.wrong.size(), 16u);
  EXPECT_NE(simt::describe_failure(k).find("mem[0]=0 (want 1)"), std::string::npos) << simt::describe_failure(k);
  const auto text = simt::render_report(report, simt::run_latency_hiding(c, {1}));
  EXPECT_NE(text.find("FAIL even_odd: 16 of 32 words wrong"), std::string::npos);
  EXPECT_NE(text.find("FAIL: 4 of 7 kernels passed"), std::string::npos);
}

TEST(Report, JsonCarriesTheSameNumbers) {
  const auto report = simt::run_divergence_report({});
  const auto j = simt::report_json(report, simt::run_latency_hiding({}, {1}));
  EXPECT_EQ(j["kernels"][3]["kernel"], "max_divergent");
  EXPECT_EQ(j["kernels"][3]["issues"], 226);
  EXPECT_EQ(j["kernels"][3]["lane_cycles"], 4224);
  EXPECT_EQ(j["pass"], true);
}

// Extension 4 against the analytic model min(1, W(1+C)/(1+C+L)), C = 12, L = 40.
TEST(LatencyHiding, GreedyFollowsTheModelUntilTheSlotIsFull) {
  const auto e = simt::run_latency_hiding({}, {1, 2, 4});
  EXPECT_NEAR(e.other_per_load, 12.0, 0.05);
  EXPECT_NEAR(e.rows[0].stats.issue_util_pct(), 24.5, 0.5);
  EXPECT_NEAR(e.rows[1].stats.issue_util_pct(), 49.0, 0.5);
  EXPECT_NEAR(e.rows[2].stats.issue_util_pct(), 98.0, 1.0);
  for (const auto& row : e.rows) EXPECT_NEAR(row.stats.issue_util_pct(), row.model_pct, 1.0) << row.warps;
}

TEST(LatencyHiding, RoundRobinSynchronisesTheWarps) {
  simt::Config c;
  c.policy = simt::SchedulingPolicy::kRoundRobin;
  const auto e = simt::run_latency_hiding(c, {1, 2, 4});
  EXPECT_NEAR(e.rows[1].stats.issue_util_pct(), 40.0, 0.5);
  EXPECT_NEAR(e.rows[2].stats.issue_util_pct(), 58.4, 0.5);
  EXPECT_LT(e.rows[2].stats.issue_util_pct(), e.rows[2].model_pct - 30);
}

TEST(LatencyHiding, ZeroLatencyMeansNothingToHide) {
  simt::Config c;
  c.load_latency = 0;
  const auto e = simt::run_latency_hiding(c, {1});
  EXPECT_DOUBLE_EQ(e.rows[0].stats.issue_util_pct(), 100.0);
}
