// The failure demo at library level: a rank exits mid-collective, and every
// survivor's watchdog turns the hang into an error naming it.
#include <gtest/gtest.h>
#include <unistd.h>

#include "ring_allreduce/collectives.hpp"
#include "ring_allreduce/launcher.hpp"

namespace {

using ring::RankOutcome;

TEST(Watchdog, EverySurvivorNamesTheDeadRankWithinTheTimeout) {
  constexpr int kWorld = 5;
  constexpr int kDead = 3;
  for (int kill_step : {0, 3, 7}) {  // first step, mid reduce-scatter, last all-gather step
    ring::LaunchOptions opts;
    opts.world = kWorld;
    opts.timeout = std::chrono::milliseconds(300);
    const auto ranks = ring::launch_local(opts, [kill_step](ring::Transport& t) {
      std::vector<double> v(10'000, 1.0);
      ring::ring_allreduce<double>(t, v, [&](int step) {
        if (t.rank() == kDead && step == kill_step) ::_exit(ring::kKilledExitCode);
      });
      return gpulab::Json{{"done", true}};
    });
    for (const auto& r : ranks) {
      if (r.rank == kDead) {
        EXPECT_EQ(r.status, RankOutcome::Status::kDied);
        EXPECT_EQ(r.exit_code, ring::kKilledExitCode);
        continue;
      }
      // A rank whose remaining steps did not depend on the dead one may finish;
      // the dead rank's right neighbour, which waits for its data, never can.
      if (r.status == RankOutcome::Status::kOk && r.rank != kDead + 1) continue;
      ASSERT_EQ(r.status, RankOutcome::Status::kFailed) << "rank " << r.rank << " step " << kill_step;
      EXPECT_EQ(r.suspects, std::vector<int>{kDead}) << r.error;
      EXPECT_NE(r.error.find("culprit: rank 3"), std::string::npos) << r.error;
      // Detected within the watchdog plus a generous margin for a loaded CI machine.
      EXPECT_LT(r.seconds, 0.3 + 5.0);
    }
  }
}

TEST(Watchdog, AStalledButLivePeerIsReportedAsStalledNotDead) {
  ring::LaunchOptions opts;
  opts.world = 3;
  opts.timeout = std::chrono::milliseconds(200);
  const auto ranks = ring::launch_local(opts, [](ring::Transport& t) {
    std::vector<double> v(1'000, 1.0);
    if (t.rank() == 1) {
      ::usleep(1'500'000);  // alive, sockets open, not participating
      return gpulab::Json{{"slept", true}};
    }
    ring::ring_allreduce<double>(t, v);
    return gpulab::Json{{"done", true}};
  });
  for (const auto& r : ranks) {
    if (r.rank == 1) continue;
    ASSERT_EQ(r.status, RankOutcome::Status::kFailed) << "rank " << r.rank;
    EXPECT_TRUE(r.suspects.empty()) << r.error;
    EXPECT_NE(r.error.find("alive but stalled"), std::string::npos) << r.error;
  }
}

}  // namespace
