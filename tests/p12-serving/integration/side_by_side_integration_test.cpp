// gpulab-serve compare-sim and batching-sweep as a user runs them: the tiny
// model on a few requests of P07's sample trace, the JSON they print, and
// their refusals of bad flags (one line, exit 2).
#include <gtest/gtest.h>

#include <string>

#include "gpulab/json.hpp"
#include "gpulab_test/program_run.hpp"

namespace {

using gpulab::Json;

const std::string kTrace = std::string(GPULAB_LAB_DIR) + "/../p07-batching/traces/plain-sample.csv";

TEST(CompareSimCli, PrintsMeasuredAndPredictedWithTheFit) {
  const auto r = gpulab_test::run_program(
      "gpulab-serve",
      "--model tiny --backend fast compare-sim --json --max-requests 8 --speed 8 --trace " +
          kTrace);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Json j = Json::parse(r.out);
  EXPECT_EQ(j["requests"], 8);
  EXPECT_EQ(j["measured"]["completed"], 8);
  EXPECT_EQ(j["sim_fitted"]["completed"], 8);
  EXPECT_EQ(j["sim_padded"]["completed"], 8);
  EXPECT_EQ(j["sim_fitted_unlimited_kv"]["completed"], 8);
  EXPECT_EQ(j["sim_kv"]["kv_blocks"], 1024);
  EXPECT_EQ(j["sim_kv"]["prefix_cache"], true);
  EXPECT_GE(j["steps"].get<int>(), 3);
  EXPECT_GE(j["fit_engine_form"]["base_ms"].get<double>(), 0);
  EXPECT_GT(j["fit_sim_form"]["iteration_ms"].get<double>(), 0);
  EXPECT_TRUE(j["sim_fitted_error_percent"]["throughput"].is_number());
}

TEST(CompareSimCli, TheTableNamesEachRun) {
  const auto r = gpulab_test::run_program(
      "gpulab-serve",
      "--model tiny --backend fast compare-sim --max-requests 6 --speed 8 --trace " + kTrace);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* line :
       {"\nfit:     step_ms = ", "\nmeasured (engine) ", "\nbatching-sim, fit x max_batch ",
        "\nbatching-sim, sim fit ", "\nsim fit, unlimited KV ",
        "\nsim kv:  the engine's 1024 blocks", "\n  error "})
    EXPECT_NE(r.out.find(line), std::string::npos) << line << " in\n" << r.out;
}

TEST(BatchingSweepCli, FindsEachModesRateAndTheRatio) {
  const auto r = gpulab_test::run_program(
      "gpulab-serve",
      "--model tiny --backend fast batching-sweep --json --max-requests 6 --min-speed 16 "
      "--max-speed 32 --refine 0 --ttft-p99-ms 100000 --trace " +
          kTrace);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Json j = Json::parse(r.out);
  // A target no run can miss: both modes hold at every speed tried, up to the cap.
  for (const char* mode : {"continuous", "static"}) {
    EXPECT_EQ(j[mode]["highest_speed"], 32.0) << mode;
    EXPECT_EQ(j[mode]["capped"], true) << mode;
    EXPECT_EQ(j[mode]["probes"].size(), 2u) << mode;
  }
  EXPECT_TRUE(j["throughput_ratio"].is_number());
}

TEST(BatchingSweepCli, AMissedTargetGivesNoRatio) {
  const auto r = gpulab_test::run_program(
      "gpulab-serve",
      "--model tiny --backend fast batching-sweep --max-requests 4 --min-speed 32 --max-speed 32 "
      "--ttft-p99-ms 0.001 --trace " +
          kTrace);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("continuous  misses the target even at 32.00x\n"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("no ratio: a mode missed the target at every speed tried"),
            std::string::npos)
      << r.out;
}

TEST(SideBySideCli, BadFlagsAreOneLineAndExit2) {
  struct Case {
    std::string args, err;
  };
  const Case cases[] = {
      {"compare-sim --trace " + kTrace + " --speed 0",
       "gpulab-serve: error: --speed: must be a finite number in [0.001, 10000], got '0' (see "
       "--help)\n"},
      {"compare-sim --trace " + kTrace + " --max-requests -1",
       "gpulab-serve: error: --max-requests: must be a whole number in [0, 1000000], got '-1' (see "
       "--help)\n"},
      {"--static-batching compare-sim --trace " + kTrace,
       "gpulab-serve: error: compare-sim: --static-batching has no batching-sim counterpart (its "
       "static model "
       "waits for a whole batch to arrive; the engine starts with what is queued)\n"},
      {"batching-sweep --trace " + kTrace + " --ttft-p99-ms nan",
       "gpulab-serve: error: --ttft-p99-ms: must be a finite number in [0.001, 1000000], got 'nan' "
       "(see --help)\n"},
      {"batching-sweep --trace " + kTrace + " --min-speed 8 --max-speed 4",
       "gpulab-serve: error: --min-speed must be > 0 and at most --max-speed\n"},
      {"batching-sweep --trace " + kTrace + " --refine 9",
       "gpulab-serve: error: --refine: must be a whole number in [0, 8], got '9' (see --help)\n"},
      {"compare-sim --trace /nonexistent.csv", ""},
  };
  for (const Case& c : cases) {
    const auto r =
        gpulab_test::run_program("gpulab-serve", "--model tiny --backend fast " + c.args);
    EXPECT_EQ(r.exit_code, 2) << c.args << "\n" << r.err;
    if (!c.err.empty())
      EXPECT_EQ(r.err, c.err) << c.args;
    else
      EXPECT_EQ(r.err.rfind("gpulab-serve: error: ", 0), 0u) << r.err;
  }
}

}  // namespace
