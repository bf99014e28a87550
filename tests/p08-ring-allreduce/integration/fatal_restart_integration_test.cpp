// "CUDA error -> fatal-and-restart" (fatal_error.hpp): a rank whose device
// context is lost exits with status 4 instead of retrying; the survivors'
// watchdog names it; the supervisor restarts every rank, and the restarted
// world finishes with the exact sum. Without a restart left, the run fails.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

#include "gpulab_test/exposition.hpp"
#include "gpulab_test/program_run.hpp"

namespace {

namespace fs = std::filesystem;

std::optional<double> value(const gpulab::prom::Exposition& e, const char* name, const gpulab::prom::Labels& labels) {
  const auto* f = e.find(name);
  const auto* s = f ? f->find(labels) : nullptr;
  return s ? std::optional<double>(s->value) : std::nullopt;
}

bool has(const std::string& text, const std::string& what) { return text.find(what) != std::string::npos; }

class FatalRestart : public ::testing::Test {
 protected:
  void SetUp() override { prom_ = fs::temp_directory_path() / ("gpulab-fatal-" + std::to_string(::getpid()) + ".prom"); }
  void TearDown() override { fs::remove(prom_); }
  fs::path prom_;
};

TEST_F(FatalRestart, TheRankExitsWithStatus4TheWatchdogNamesItAndTheRestartedWorldFinishes) {
  const auto r = gpulab_test::run_program(
      "ring-allreduce", "--world 4 --fatal-rank 2 --fatal-step 3 --timeout-ms 500 --max-restarts 1 --metrics-out " +
                            prom_.string());
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  // The worker's own line: no retry, the status for the supervisor.
  EXPECT_TRUE(has(r.err, "rank 2: fatal device error at ring step 3 (injected: like cudaErrorIllegalAddress, the "
                         "context is lost); exiting with status 4 for a restart"))
      << r.err;
  EXPECT_TRUE(has(r.out, "  attempt 1: rank 2 exited with status 4: fatal device error, the process cannot recover\n"))
      << r.out;
  // Every survivor's watchdog names rank 2 (its connections closed with the process).
  for (const int survivor : {0, 1, 3})
    EXPECT_TRUE(has(r.out, "  attempt 1: rank " + std::to_string(survivor) + ": watchdog: no progress for 500 ms"))
        << r.out;
  EXPECT_TRUE(has(r.out, "culprit: rank 2 (connection closed: the process is gone)")) << r.out;
  EXPECT_TRUE(has(r.out, "  supervisor: restarting all 4 ranks (restart 1 of at most 1)\n")) << r.out;
  EXPECT_TRUE(has(r.out, "  correctness: PASS (every rank's result == sum 1..4 = 10)")) << r.out;

  const auto e = gpulab_test::read_exposition(prom_);
  for (const int rank : {0, 1, 3})
    EXPECT_EQ(value(e, "allreduce_fatal_device_errors_total", {{"rank", std::to_string(rank)}}), 0.0) << rank;
  EXPECT_EQ(value(e, "allreduce_fatal_device_errors_total", {{"rank", "2"}}), 1.0);
  EXPECT_EQ(value(e, "allreduce_restarts_total", {}), 1.0);
  // The headline's metrics are the restarted world's: every rank finished.
  for (int rank = 0; rank < 4; ++rank)
    EXPECT_EQ(value(e, "allreduce_timeouts_total", {{"rank", std::to_string(rank)}}), 0.0) << rank;
}

TEST_F(FatalRestart, WithNoRestartLeftTheRunFails) {
  const auto r = gpulab_test::run_program(
      "ring-allreduce", "--world 3 --fatal-rank 0 --fatal-step 1 --timeout-ms 500 --metrics-out " + prom_.string());
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_TRUE(has(r.out, "  attempt 1: rank 0 exited with status 4")) << r.out;
  EXPECT_TRUE(has(r.out, "  supervisor: no restart left (--max-restarts 0)\n")) << r.out;
  EXPECT_TRUE(has(r.out, "FAIL: a rank exited with the fatal device status 4 and no restart is left\n")) << r.out;
  const auto e = gpulab_test::read_exposition(prom_);
  EXPECT_EQ(value(e, "allreduce_fatal_device_errors_total", {{"rank", "0"}}), 1.0);
  EXPECT_EQ(value(e, "allreduce_restarts_total", {}), 0.0);
}

// The drill as a test (docs/runbooks/worker-fatal-device-error.md): the values a real run
// wrote, scraped once a minute after 10 quiet minutes, through the SLO pack's rules. The
// ticket opens for the rank that hit the error and no other; a healthy supervised run
// (the same flags, no injection) opens nothing.
TEST_F(FatalRestart, TheRunsMetricsOpenTheTicketForThatRankOnly) {
  if (std::system("command -v promtool >/dev/null 2>&1") != 0) GTEST_SKIP() << "promtool not found (apt-get install prometheus)";
  const fs::path healthy = prom_.string() + ".healthy";
  auto r = gpulab_test::run_program("ring-allreduce", "--world 4 --fatal-rank 2 --fatal-step 3 --timeout-ms 500 "
                                                      "--max-restarts 1 --metrics-out " + prom_.string());
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  r = gpulab_test::run_program("ring-allreduce", "--world 4 --timeout-ms 500 --max-restarts 1 --metrics-out " +
                                                     healthy.string());
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  std::string series;
  std::string firing;
  for (const auto& [file, job] : {std::pair{prom_, std::string("faulted")}, std::pair{healthy, std::string("healthy")}}) {
    const auto e = gpulab_test::read_exposition(file);
    for (int rank = 0; rank < 4; ++rank) {
      const auto v = value(e, "allreduce_fatal_device_errors_total", {{"rank", std::to_string(rank)}});
      ASSERT_TRUE(v.has_value()) << file << " rank " << rank;
      series += "      - series: 'allreduce_fatal_device_errors_total{instance=\"trainer-0\",job=\"" + job +
                "\",rank=\"" + std::to_string(rank) + "\"}'\n        values: '_x10 " + std::to_string(*v) + "x20'\n";
      if (*v > 0)
        firing += "          - labels: 'ALERTS{alertname=\"WorkerFatalDeviceError\",alertstate=\"firing\",instance=\"trainer-0\","
                  "job=\"" + job + "\",rank=\"" + std::to_string(rank) + "\",severity=\"ticket\"}'\n            value: 1\n";
    }
    const auto restarts = value(e, "allreduce_restarts_total", {});
    ASSERT_TRUE(restarts.has_value()) << file;
    series += "      - series: 'allreduce_restarts_total{instance=\"trainer-0\",job=\"" + job + "\"}'\n        values: '_x10 " +
              std::to_string(*restarts) + "x20'\n";
  }
  EXPECT_EQ(firing.find("job=\"healthy\""), std::string::npos) << firing;
  EXPECT_NE(firing.find("job=\"faulted\",rank=\"2\""), std::string::npos) << firing;
  const fs::path rules = fs::path(GPULAB_LAB_DIR) / "../p10-exporter/slo/rules/fatal.rules.yml";
  const fs::path test = prom_.string() + ".test.yml";
  std::ofstream(test) << "rule_files:\n  - " << fs::weakly_canonical(rules).string()
                      << "\nevaluation_interval: 1m\ntests:\n  - interval: 1m\n    input_series:\n"
                      << series << "    promql_expr_test:\n"
                      << "      - expr: ALERTS{alertstate=\"firing\"}\n        eval_time: 9m\n        exp_samples: []\n"
                      << "      - expr: ALERTS{alertstate=\"firing\"}\n        eval_time: 12m\n        exp_samples:\n"
                      << firing;
  const auto p = gpulab_test::run_command("promtool test rules '" + test.string() + "'", gpulab_test::Stderr::kMerged);
  fs::remove(test);
  fs::remove(healthy);
  EXPECT_EQ(p.exit_code, 0) << p.out;
}

TEST_F(FatalRestart, TheFlagsAreCheckedBeforeAnyRankStarts) {
  auto r = gpulab_test::run_program("ring-allreduce", "--world 4 --fatal-rank 2 --fatal-step 3");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err,
            "ring-allreduce: error: --fatal-rank needs --timeout-ms: the other ranks' watchdog is what ends their wait "
            "for the dead rank\n");
  r = gpulab_test::run_program("ring-allreduce", "--world 4 --fatal-rank 2 --timeout-ms 100");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "ring-allreduce: error: --fatal-rank and --fatal-step go together\n");
  r = gpulab_test::run_program("ring-allreduce", "--world 4 --fatal-rank 1 --fatal-step 6 --timeout-ms 100");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "ring-allreduce: error: --fatal-step 6: a ring all-reduce on 4 ranks has steps 0..5\n");
  r = gpulab_test::run_program("ring-allreduce", "--world 4 --fatal-rank 4 --fatal-step 1 --timeout-ms 100");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "ring-allreduce: error: --fatal-rank 4 is not a rank of a world of 4\n");
}

}  // namespace
