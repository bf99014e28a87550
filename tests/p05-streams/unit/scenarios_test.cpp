// The four scenarios' semantics under the virtual clock (exact figures), and
// once on worker threads for the lifetime and deadlock scenarios, whose
// verdicts do not depend on timing.
#include "streams/scenarios.hpp"

#include <gtest/gtest.h>

#include "streams/virtual_executor.hpp"

namespace streams {
namespace {

TEST(Scenarios, PipelineIsExactlyTwiceAsFastInVirtualTime) {
  const PipelineResult r = scenario_pipeline(Clock::kVirtual);
  EXPECT_DOUBLE_EQ(r.serial_ms, 280);     // 8 x (10 + 15 + 10)
  EXPECT_DOUBLE_EQ(r.pipelined_ms, 140);  // 10 + 8 x 15 + 10: compute-bound
  EXPECT_TRUE(r.pass);
}

TEST(Scenarios, DoubleBufferingCostsAlittleAndOneCopyStreamFailsTheGate) {
  PipelineShape two;
  two.buffers = 2;
  VirtualExecutor ex;
  EXPECT_DOUBLE_EQ(time_pipelined(ex, two), 155) << "strict double buffering: 1.81x";
  PipelineShape one;
  one.buffers = 1;
  VirtualExecutor ex1;
  EXPECT_GT(time_pipelined(ex1, one), 280.0 / 1.7)
      << "one buffer serialises copy-in behind copy-out";
}

TEST(Scenarios, LegacyDefaultStreamLosesTheOverlap) {
  const DefaultStreamResult r = scenario_default_stream(Clock::kVirtual);
  EXPECT_DOUBLE_EQ(r.one_stream_ms, 80);
  EXPECT_DOUBLE_EQ(r.two_stream_ms, 40);
  EXPECT_TRUE(r.pass);
}

TEST(Scenarios, HostOrderedFreeCorruptsStreamOrderedDoesNotVirtual) {
  const LifetimeResult r = scenario_lifetime(Clock::kVirtual, 50, 1);
  EXPECT_EQ(r.host_corrupted, r.host_trials);
  EXPECT_EQ(r.stream_corrupted, 0);
  EXPECT_EQ(r.reused, r.host_trials + r.trials)
      << "every trial really handed the block to the other stream";
  EXPECT_EQ(r.edges, 50u);
  EXPECT_TRUE(r.pass);
}

TEST(Scenarios, HostOrderedFreeCorruptsStreamOrderedDoesNotThreads) {
  const LifetimeResult r = scenario_lifetime(Clock::kWall, 30, 7);
  EXPECT_FALSE(r.hook_timed_out);
  EXPECT_EQ(r.host_corrupted, r.host_trials) << "the interleaving hook makes the bug deterministic";
  EXPECT_EQ(r.stream_corrupted, 0);
  EXPECT_TRUE(r.pass);
}

TEST(Scenarios, CircularWaitDetectedAtIssueAcyclicRuns) {
  for (const Clock clock : {Clock::kVirtual, Clock::kWall}) {
    const DeadlockResult r = scenario_deadlock(clock);
    EXPECT_TRUE(r.acyclic_accepted);
    EXPECT_TRUE(r.acyclic_order_ok);
    EXPECT_TRUE(r.cycle_detected);
    EXPECT_NE(r.cycle_message.find("circular wait"), std::string::npos);
    EXPECT_TRUE(r.pass);
  }
}

}  // namespace
}  // namespace streams
