// The curriculum's two tables, reproduced from the shipped traces.
#include <gtest/gtest.h>

#include <sstream>

#include "cluster_sim/scenarios.hpp"
#include "cluster_sim/trace.hpp"

namespace cs = cluster_sim;

namespace {

std::vector<std::string> tokens(const std::string& text) {
  std::istringstream in(text);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

}  // namespace

TEST(PolicyTable, MatchesTheCurriculumTokenForToken) {
  const cs::Report r = cs::policy_comparison(cs::scenario_trace("policy_mix"));
  // The curriculum's block (its spacing was typed by hand; the tokens are the contract).
  const std::string expected =
      "== Placement-policy comparison (mixed trace + whole-node jobs) ==\n"
      "policy            util%  p50_wait  p99_wait  stranded  deadlocks\n"
      "spread             60.9       0.0     228.0        24         0\n"
      "first_fit          67.0       0.0      36.0          2         0\n"
      "best_fit           67.0       0.0      36.0          2         0\n";
  EXPECT_EQ(tokens(r.text), tokens(expected));
  EXPECT_TRUE(r.passed());
}

TEST(PolicyTable, ColumnsLineUpUnderTheHeader) {
  const cs::Report r = cs::policy_comparison(cs::scenario_trace("policy_mix"));
  std::istringstream in(r.text);
  std::string title, header, row;
  std::getline(in, title);
  std::getline(in, header);
  while (std::getline(in, row)) EXPECT_EQ(row.size(), header.size()) << row;
}

TEST(PolicyTable, TheFileOnDiskGivesTheSameNumbersAsTheBuiltInCopy) {
  const auto disk = cs::load_trace(std::string(GPULAB_LAB_DIR) + "/traces/policy_mix.csv");
  EXPECT_EQ(cs::policy_comparison(disk).text, cs::policy_comparison(cs::scenario_trace("policy_mix")).text);
}

TEST(PolicyTable, SpreadStrandsWholeNodeJobsAndBestFitDoesNot) {
  const auto jobs = cs::scenario_trace("policy_mix");
  cs::SimConfig cfg;
  cfg.policy = cs::Policy::kSpread;
  const auto spread = cs::simulate(jobs, cfg);
  cfg.policy = cs::Policy::kBestFit;
  const auto best = cs::simulate(jobs, cfg);
  // W1 and W2 (8 GPUs each) wait behind the scattered 2-GPU jobs under spread only.
  EXPECT_DOUBLE_EQ(spread.jobs[4].wait, 228.0);
  EXPECT_DOUBLE_EQ(best.jobs[4].wait, 0.0);
  EXPECT_EQ(spread.stranded_peak, 24);
  EXPECT_DOUBLE_EQ(spread.makespan, 2508.0);
  EXPECT_DOUBLE_EQ(best.makespan, 2280.0);
}

TEST(GangDemo, NaiveGrabbingDeadlocksAndGangSchedulingFinishesAll) {
  const cs::Report r = cs::gang_comparison(cs::scenario_trace("gang_demo"));
  EXPECT_EQ(r.text,
            "== Gang vs naive: the partial-allocation deadlock ==\n"
            "  naive_no_gang : 0/3 jobs completed, 3 deadlocked (held GPUs, never able to finish)\n"
            "  best_fit_gang : 3/3 jobs completed, 0 deadlocked\n");
}

TEST(GangDemo, AtomicGangsRunTwoAtOnceThenTheThird) {
  cs::SimConfig cfg;
  cfg.nodes = 3;
  cfg.gpus_per_node = 4;
  cfg.gang = true;
  const auto r = cs::simulate(cs::scenario_trace("gang_demo"), cfg);
  EXPECT_DOUBLE_EQ(r.jobs[0].first_start, 0.0);
  EXPECT_DOUBLE_EQ(r.jobs[1].first_start, 0.0);
  EXPECT_DOUBLE_EQ(r.jobs[2].first_start, 100.0);
  EXPECT_EQ(r.deadlocked, 0);
}

TEST(EventOrder, CompletionsReleaseBeforeArrivalsAtTheSameInstant) {
  // A finishes at 10 exactly when B arrives; B must start at 10, not wait.
  std::istringstream in("A,0,8,10\nB,10,8,5\n");
  cs::SimConfig cfg;
  cfg.nodes = 1;
  const auto r = cs::simulate(cs::parse_trace(in, "t"), cfg);
  EXPECT_DOUBLE_EQ(r.jobs[1].first_start, 10.0);
  EXPECT_DOUBLE_EQ(r.util_pct, 100.0);
}
