// The subcommands' work without the program: `run`'s checks and its trace, `generate`'s CSV,
// and the report lists of `extensions` and of the bare command.
#include "cluster_sim/commands.hpp"

#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "gpulab/errors.hpp"

namespace cs = cluster_sim;

namespace {

std::string run_error(const cs::RunRequest& request) {
  try {
    cs::run_trace(request);
  } catch (const gpulab::UsageError& e) {
    return e.what();
  }
  return "";
}

cs::RunRequest generated(std::size_t jobs) {
  cs::RunRequest r;
  r.generate = jobs;
  return r;
}

}  // namespace

TEST(Commands, RunRefusesEachBadFlagByName) {
  EXPECT_EQ(run_error(cs::RunRequest{}), "run needs --trace FILE or --generate N");
  auto r = generated(10);
  r.queue = "lifo";
  EXPECT_EQ(run_error(r), "unknown queue 'lifo' (use fifo or drf)");
  r = generated(10);
  r.cfg.checkpoint_penalty = -1;
  EXPECT_EQ(run_error(r), "--checkpoint-penalty must be >= 0");
  r = generated(10);
  r.cfg.node_penalty = 0.5;
  EXPECT_EQ(run_error(r), "--island-penalty and --node-penalty must be >= 1");
  r = generated(10);
  r.cfg.backfill_depth = 0;
  EXPECT_EQ(run_error(r), "--backfill-depth must be >= 1");
}

TEST(Commands, RunGeneratesFromTheSeedAndAppliesPolicyAndQueue) {
  auto r = generated(50);
  r.policy = "spread";
  r.queue = "drf";
  r.gang = true;
  r.seed = 7;
  const cs::RunOutcome a = cs::run_trace(r);
  EXPECT_EQ(a.jobs.size(), 50u);
  EXPECT_EQ(a.cfg.policy, cs::Policy::kSpread);
  EXPECT_EQ(a.cfg.order, cs::QueueOrder::kDrf);
  EXPECT_TRUE(a.cfg.gang);
  EXPECT_EQ(a.result.completed + a.result.deadlocked, 50);
  const cs::RunOutcome b = cs::run_trace(r);
  EXPECT_EQ(a.result.makespan, b.result.makespan);
  r.seed = 8;
  EXPECT_NE(cs::run_trace(r).result.makespan, a.result.makespan);
}

TEST(Commands, GeneratedCsvParsesBackToTheSameTrace) {
  cs::GeneratorConfig g;
  g.jobs = 40;
  g.seed = 3;
  const std::string csv = cs::generated_trace_csv(g);
  EXPECT_EQ(csv, cs::generated_trace_csv(g));
  std::istringstream in(csv);
  const auto parsed = cs::parse_trace(in, "generated.csv");
  const auto direct = cs::generate_trace(g);
  ASSERT_EQ(parsed.size(), direct.size());
  for (std::size_t i = 0; i < parsed.size(); ++i) {
    EXPECT_EQ(parsed[i].id, direct[i].id);
    EXPECT_EQ(parsed[i].gpus, direct[i].gpus);
  }
}

TEST(Commands, ReportListsAreTheCurriculumsAndTheFiveExtensions) {
  EXPECT_EQ(cs::curriculum_tables().size(), 2u);
  const auto extensions = cs::all_extensions();
  ASSERT_EQ(extensions.size(), 5u);
  for (const auto& report : extensions) EXPECT_TRUE(report.passed()) << report.text;
  EXPECT_EQ(cs::trace_or_scenario("", "drf").size(), cs::scenario_trace("drf").size());
}
