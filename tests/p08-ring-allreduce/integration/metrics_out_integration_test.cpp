// ring-allreduce --metrics-out FILE, run as a user would: a healthy run and the
// failure demo (the drill in docs/runbooks/allreduce-hang-dead-rank.md).
#include <gtest/gtest.h>

#include <filesystem>
#include <optional>
#include <string>

#include "gpulab/prom_text.hpp"
#include "gpulab_test/exposition.hpp"
#include "gpulab_test/program_run.hpp"

namespace {

using gpulab_test::read_exposition;
using gpulab_test::run_program;
namespace fs = std::filesystem;

std::optional<double> value(const gpulab::prom::Exposition& e, const char* name, int rank) {
  const auto* f = e.find(name);
  const auto* s = f ? f->find({{"rank", std::to_string(rank)}}) : nullptr;
  return s ? std::optional<double>(s->value) : std::nullopt;
}

TEST(RingAllreduceMetricsOut, HealthyRunCountsEveryRanksBytes) {
  const fs::path out = fs::path(::testing::TempDir()) / "ring-healthy.prom";
  fs::remove(out);
  const auto r = run_program(
      "ring-allreduce", "--world 4 --size 1000 --timeout-ms 5000 --metrics-out " + out.string());
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto e = read_exposition(out);
  for (int rank = 0; rank < 4; ++rank) {
    EXPECT_EQ(value(e, "allreduce_operations_total", rank), 1.0);
    EXPECT_EQ(value(e, "allreduce_timeouts_total", rank), 0.0);
    EXPECT_EQ(value(e, "allreduce_bytes_total", rank), 12000.0);  // 2(N-1)/N x 8000 B
    const auto secs = value(e, "allreduce_seconds_total", rank);
    ASSERT_TRUE(secs.has_value());
    EXPECT_GT(*secs, 0.0);
  }
}

TEST(RingAllreduceMetricsOut, DeadRankLeavesTimeoutsOnTheSurvivorsAndNothingForItself) {
  const fs::path out = fs::path(::testing::TempDir()) / "ring-dead.prom";
  fs::remove(out);
  const auto r = run_program(
      "ring-allreduce",
      "--world 4 --kill-rank 2 --kill-step 3 --timeout-ms 500 --metrics-out " + out.string());
  ASSERT_EQ(r.exit_code, 1) << r.out << r.err;
  const auto e = read_exposition(out);
  for (const int rank : {0, 1, 3}) {
    EXPECT_EQ(value(e, "allreduce_timeouts_total", rank), 1.0) << rank;
    EXPECT_EQ(value(e, "allreduce_bytes_total", rank), std::nullopt) << rank;
  }
  EXPECT_EQ(value(e, "allreduce_operations_total", 2), std::nullopt);
}

TEST(RingAllreduceMetricsOut, StragglerCheckExportsTheNamedRank) {
  const fs::path out = fs::path(::testing::TempDir()) / "ring-straggler.prom";
  fs::remove(out);
  const auto r = run_program("ring-allreduce",
                             "--world 4 --size 20000 --steps 10 --slow-rank 3 --slow-factor 5 "
                             "--metrics-out " +
                                 out.string());
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto e = read_exposition(out);
  for (int rank = 0; rank < 4; ++rank) {
    EXPECT_EQ(value(e, "allreduce_straggler", rank), rank == 3 ? 1.0 : 0.0) << rank;
    ASSERT_TRUE(value(e, "allreduce_straggler_score", rank).has_value()) << rank;
    ASSERT_TRUE(value(e, "allreduce_step_compute_seconds", rank).has_value()) << rank;
    EXPECT_EQ(value(e, "allreduce_operations_total", rank), 1.0) << "the headline's metrics stay";
  }
  EXPECT_GE(*value(e, "allreduce_straggler_score", 3), 3.5);
}

TEST(RingAllreduceMetricsOut, UnwritablePathIsAUsageError) {
  const auto r =
      run_program("ring-allreduce", "--world 2 --size 10 --metrics-out /nonexistent-dir/x.prom");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err.rfind("ring-allreduce: error: --metrics-out: ", 0), 0u) << r.err;
}

}  // namespace
