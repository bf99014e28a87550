// Extension 5: a reserved whole-node pool for large jobs, and defragmentation
// that moves checkpointable small jobs so a blocked large job can start.
#include <gtest/gtest.h>

#include <sstream>

#include "cluster_sim/online_scheduler.hpp"
#include "cluster_sim/scenarios.hpp"
#include "cluster_sim/simulator.hpp"
#include "cluster_sim/trace.hpp"
#include "gpulab/errors.hpp"

namespace {

namespace cs = cluster_sim;

cs::Request req(int gpus, std::size_t seq) {
  cs::Request r;
  r.gpus = gpus;
  r.seq = seq;
  return r;
}

cs::PoolPlacement on(int node, std::uint64_t mask) {
  return {0, {cs::Slice{node, mask, 0}}};
}

int count(const cs::SchedulePass& p, cs::SchedulerEvent::Kind k) {
  int n = 0;
  for (const auto& e : p.events) n += e.kind == k ? 1 : 0;
  return n;
}

TEST(Defrag, MovesOneSmallJobSoAWholeNodeJobStarts) {
  for (const bool defrag : {false, true}) {
    cs::SchedulerConfig cfg;
    cfg.defrag = defrag;
    cs::OnlineScheduler s({cs::Cluster(2, 8)}, cfg);
    s.adopt(1, req(2, 1), on(0, 0b11), 0);  // 2 GPUs on each node: 12 free, no node whole
    s.adopt(2, req(2, 2), on(1, 0b11), 0);
    s.submit(3, req(8, 3));
    const auto pass = s.schedule(0);
    if (!defrag) {
      EXPECT_TRUE(pass.events.empty());
      EXPECT_FALSE(s.pending_empty());
      continue;
    }
    ASSERT_EQ(count(pass, cs::SchedulerEvent::Kind::kMigrate), 1);
    EXPECT_EQ(pass.events[0].job, 1u);  // the lowest node's job, onto the other node
    EXPECT_EQ(pass.events[0].by, 3u);
    EXPECT_EQ(pass.events[0].placement.placement.front().node, 1);
    ASSERT_EQ(count(pass, cs::SchedulerEvent::Kind::kStart), 1);
    EXPECT_EQ(pass.events[1].job, 3u);
    EXPECT_EQ(pass.events[1].placement.placement.front().node, 0);
    EXPECT_EQ(s.pool(0).free_gpus(0), 0);
    EXPECT_EQ(s.pool(0).free_gpus(1), 4);
    EXPECT_TRUE(s.pending_empty());
  }
}

TEST(Defrag, NeverMovesLargeJobsAndNeverMovesWithoutAWholePlan) {
  cs::SchedulerConfig cfg;
  cfg.defrag = true;
  {
    cs::OnlineScheduler s({cs::Cluster(2, 8)}, cfg);
    s.adopt(1, req(4, 1), on(0, 0x0f), 0);  // 4-GPU jobs are large: not movable
    s.adopt(2, req(4, 2), on(1, 0x0f), 0);
    s.submit(3, req(8, 3));
    EXPECT_TRUE(s.schedule(0).events.empty());
  }
  {
    // Only 2 GPUs free in all: no plan frees a node, so nothing moves.
    cs::OnlineScheduler s({cs::Cluster(2, 8)}, cfg);
    for (int k = 0; k < 4; ++k)
      s.adopt(static_cast<cs::JobId>(k + 1), req(2, k), on(0, 0b11ULL << (2 * k)), 0);
    for (int k = 0; k < 3; ++k)
      s.adopt(static_cast<cs::JobId>(k + 5), req(2, k + 4), on(1, 0b11ULL << (2 * k)), 0);
    s.submit(9, req(8, 9));
    EXPECT_TRUE(s.schedule(0).events.empty());
    EXPECT_EQ(s.pool(0).free_gpus(1), 2);
  }
  {
    // A small head never triggers it.
    cs::OnlineScheduler s({cs::Cluster(1, 4)}, cfg);
    s.adopt(1, req(3, 1), on(0, 0b111), 0);
    s.submit(2, req(2, 2));
    EXPECT_TRUE(s.schedule(0).events.empty());
  }
}

std::vector<cs::Job> trace(const std::string& text) {
  std::istringstream in(text);
  return cs::parse_trace(in, "t");
}

// Eight 1-GPU jobs, then a whole-node job. Spread scatters the small ones over
// both nodes, so the big one waits for them to end (99) unless a node is
// reserved for it or the small jobs on one node are moved.
const char* kSpreadTrace =
    "S1,0,1,100\nS2,0,1,100\nS3,0,1,100\nS4,0,1,100\nS5,0,1,100\nS6,0,1,100\nS7,0,1,100\nS8,0,1,"
    "100\nL,1,8,10\n";

cs::SimConfig spread_2x8() {
  cs::SimConfig c;
  c.nodes = 2;
  c.gpus_per_node = 8;
  c.policy = cs::Policy::kSpread;
  c.checkpoint_penalty = 30;
  return c;
}

TEST(ReservedPool, SmallJobsStayOffTheReserveSoTheLargeJobStartsAtOnce) {
  const auto jobs = trace(kSpreadTrace);
  const cs::SimResult shared = cs::simulate(jobs, spread_2x8());
  EXPECT_DOUBLE_EQ(shared.jobs[8].wait, 99.0);
  cs::SimConfig cfg = spread_2x8();
  cfg.reserve_nodes = 1;
  const cs::SimResult r = cs::simulate(jobs, cfg);
  EXPECT_DOUBLE_EQ(r.jobs[8].wait, 0.0);
  for (int i = 0; i < 8; ++i) EXPECT_DOUBLE_EQ(r.jobs[static_cast<std::size_t>(i)].wait, 0.0) << i;
  EXPECT_EQ(r.completed, 9);
  EXPECT_DOUBLE_EQ(r.makespan, 100.0);
}

TEST(Defrag, SimulatedMovesCostTheCheckpointPenaltyAndTheLargeJobStartsAtOnce) {
  cs::SimConfig cfg = spread_2x8();
  cfg.defrag = true;
  const cs::SimResult r = cs::simulate(trace(kSpreadTrace), cfg);
  EXPECT_DOUBLE_EQ(r.jobs[8].wait, 0.0);
  EXPECT_EQ(r.migrations, 4);                   // one node's four 1-GPU jobs
  EXPECT_DOUBLE_EQ(r.lost_gpu_time, 4 * 30.0);  // penalty x their GPUs
  EXPECT_DOUBLE_EQ(r.makespan, 100.0 + 30.0);   // the moved jobs redo 30 units
  EXPECT_EQ(r.completed, 9);
  for (int i = 0; i < 8; ++i)
    EXPECT_DOUBLE_EQ(r.jobs[static_cast<std::size_t>(i)].wait, 0.0) << "a move is not a wait";
}

TEST(ReservedPool, ImpossibleSettingsAreUsageErrors) {
  const auto jobs = trace(kSpreadTrace);
  cs::SimConfig all = spread_2x8();
  all.reserve_nodes = 2;
  EXPECT_THROW(cs::simulate(jobs, all), gpulab::UsageError);
  cs::SimConfig naive = spread_2x8();
  naive.reserve_nodes = 1;
  naive.gang = false;
  EXPECT_THROW(cs::simulate(jobs, naive), gpulab::UsageError);
  cs::SimConfig small_pools = spread_2x8();
  small_pools.reserve_nodes = 1;
  try {
    cs::simulate(trace("G,0,16,10\n"), small_pools);
    FAIL() << "a 16-GPU job fits neither 8-GPU pool";
  } catch (const gpulab::UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("the largest pool it may use has 8"), std::string::npos)
        << e.what();
  }
}

TEST(Fragmentation, SeededComparisonPassesItsChecksAndRepeats) {
  const cs::Report a = cs::fragmentation_comparison(cs::FragmentationConfig{});
  EXPECT_TRUE(a.passed()) << a.text;
  EXPECT_EQ(a.json["runs"].size(), 8u);
  EXPECT_EQ(a.json, cs::fragmentation_comparison(cs::FragmentationConfig{}).json);
  cs::FragmentationConfig other;
  other.seed = 2;
  EXPECT_NE(a.json["runs"], cs::fragmentation_comparison(other).json["runs"]);
  cs::FragmentationConfig bad;
  bad.reserve_nodes = bad.nodes;
  EXPECT_THROW(cs::fragmentation_comparison(bad), gpulab::UsageError);
}

}  // namespace
