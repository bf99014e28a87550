// Each extension changes what it claims to change, and only that.
#include <gtest/gtest.h>

#include <sstream>

#include "cluster_sim/scenarios.hpp"
#include "cluster_sim/trace.hpp"

namespace cs = cluster_sim;

namespace {

std::vector<cs::Job> trace(const std::string& text) {
  std::istringstream in(text);
  return cs::parse_trace(in, "t");
}

}  // namespace

TEST(Preemption, HighPriorityJobEvictsAndTheVictimPaysTheCheckpoint) {
  const auto jobs = trace("L,0,8,100,0\nH,10,8,20,1\n");
  cs::SimConfig cfg;
  cfg.nodes = 1;
  const auto plain = cs::simulate(jobs, cfg);
  EXPECT_DOUBLE_EQ(plain.jobs[1].wait, 90.0);  // priority inversion: H waits for L
  cfg.preempt = true;
  cfg.checkpoint_penalty = 30;
  const auto pre = cs::simulate(jobs, cfg);
  EXPECT_DOUBLE_EQ(pre.jobs[1].wait, 0.0);
  EXPECT_DOUBLE_EQ(pre.jobs[1].end, 30.0);
  // L ran 10, lost its slot at 10, resumes at 30 with 90 + 30 left.
  EXPECT_DOUBLE_EQ(pre.jobs[0].end, 150.0);
  EXPECT_EQ(pre.jobs[0].preemptions, 1);
  EXPECT_DOUBLE_EQ(pre.lost_gpu_time, 240.0);
}

TEST(Preemption, EqualPriorityNeverEvicts) {
  const auto jobs = trace("A,0,8,100,1\nB,10,8,20,1\n");
  cs::SimConfig cfg;
  cfg.nodes = 1;
  cfg.preempt = true;
  EXPECT_EQ(cs::simulate(jobs, cfg).preemptions, 0);
}

TEST(Preemption, ScenarioShowsInversionAvoided) {
  const auto r = cs::preemption_comparison(cs::scenario_trace("preemption"), 30);
  EXPECT_TRUE(r.passed()) << r.text;
  EXPECT_GT(r.json["modes"][0]["hi_max_wait"].get<double>(), 0.0);
  EXPECT_EQ(r.json["modes"][1]["hi_max_wait"].get<double>(), 0.0);
}

TEST(Preemption, CombinedWithDrfEveryJobStillFinishes) {
  // Regression: under DRF, another tenant's job used to take the GPUs a
  // preemption had freed, and the pass evicted and re-placed forever.
  cs::GeneratorConfig g;
  g.jobs = 3000;
  g.nodes = 20;
  const auto jobs = cs::generate_trace(g);
  cs::SimConfig cfg;
  cfg.nodes = 20;
  cfg.cpus_per_node = 64;
  cfg.order = cs::QueueOrder::kDrf;
  cfg.preempt = true;
  cfg.backfill = true;
  const auto r = cs::simulate(jobs, cfg);
  EXPECT_EQ(r.completed, 3000);
}

TEST(Drf, CpuHeavyTenantIsNotStarvedBehindAGpuFlood) {
  const auto r = cs::drf_comparison(cs::scenario_trace("drf"));
  EXPECT_TRUE(r.passed()) << r.text;
  const auto& fifo = r.json["queues"][0]["tenants"];
  const auto& drf = r.json["queues"][1]["tenants"];
  EXPECT_LT(drf["etl"]["mean_wait"].get<double>(), fifo["etl"]["mean_wait"].get<double>());
  EXPECT_GT(drf["etl"]["dominant_share"].get<double>(), 0.2);
}

TEST(Drf, PicksTheTenantWithTheSmallestDominantShare) {
  // One node: a1 and x (tenant a) fill it; x ends at 5. Then a holds 50% and b
  // holds nothing, so DRF serves b1 before a2 although a2 arrived first.
  const auto jobs = trace("a1,0,4,10,0,a,0\nx,0,4,5,0,a,0\na2,1,4,10,0,a,0\nb1,2,4,10,0,b,0\n");
  cs::SimConfig cfg;
  cfg.nodes = 1;
  cfg.cpus_per_node = 64;
  cfg.order = cs::QueueOrder::kDrf;
  const auto drf = cs::simulate(jobs, cfg);
  EXPECT_DOUBLE_EQ(drf.jobs[3].first_start, 5.0);
  EXPECT_DOUBLE_EQ(drf.jobs[2].first_start, 10.0);
  cfg.order = cs::QueueOrder::kFifo;
  const auto fifo = cs::simulate(jobs, cfg);
  EXPECT_DOUBLE_EQ(fifo.jobs[2].first_start, 5.0);
  EXPECT_DOUBLE_EQ(fifo.jobs[3].first_start, 10.0);
}

TEST(Topology, TopologyAwarePaysOffInThroughput) {
  const auto r = cs::topology_comparison(cs::scenario_trace("topology"), 1.5, 3.0);
  EXPECT_TRUE(r.passed()) << r.text;
  EXPECT_LT(r.json["policies"][2]["split_islands"].get<int>(), r.json["policies"][0]["split_islands"].get<int>());
}

TEST(Topology, SpanningIslandsStretchesTheJob) {
  const auto jobs = trace("a,0,2,100\nb,0,4,100\n");
  cs::SimConfig cfg;
  cfg.nodes = 1;
  cfg.island_size = 4;
  cfg.policy = cs::Policy::kFirstFit;
  const auto ff = cs::simulate(jobs, cfg);
  EXPECT_TRUE(ff.jobs[1].spanned_islands);  // GPUs 2..5
  EXPECT_DOUBLE_EQ(ff.jobs[1].end, 150.0);
  cfg.policy = cs::Policy::kTopologyAware;
  const auto ta = cs::simulate(jobs, cfg);
  EXPECT_FALSE(ta.jobs[1].spanned_islands);
  EXPECT_DOUBLE_EQ(ta.jobs[1].end, 100.0);
}

TEST(Topology, GangsAcrossNodesPayTheNodePenalty) {
  const auto jobs = trace("g,0,12,100\n");
  cs::SimConfig cfg;
  cfg.nodes = 2;
  cfg.island_size = 4;
  const auto r = cs::simulate(jobs, cfg);
  EXPECT_TRUE(r.jobs[0].spanned_nodes);
  EXPECT_DOUBLE_EQ(r.jobs[0].end, 300.0);
}

TEST(Backfill, SmallJobsFillTheGapWithoutDelayingTheReservedGang) {
  const auto r = cs::backfill_comparison(cs::scenario_trace("backfill"));
  EXPECT_TRUE(r.passed()) << r.text;
  const auto& fifo = r.json["queues"][0];
  const auto& easy = r.json["queues"][1];
  EXPECT_LT(easy["small_mean_wait"].get<double>(), fifo["small_mean_wait"].get<double>());
  EXPECT_EQ(easy["big_last_start"].get<double>(), fifo["big_last_start"].get<double>());
}

TEST(Backfill, AJobThatWouldOutliveTheReservationMustWait) {
  // Node 1 frees at 50, so the 16-GPU gang is reserved for t=50 on both nodes.
  // "short" (ends at 40) backfills; "long" (would end at 110) may not.
  const auto jobs = trace("a,0,8,50\nb,0,4,50\nbig,1,16,10\nshort,2,4,38\nlong,3,4,107\n");
  cs::SimConfig cfg;
  cfg.nodes = 2;
  cfg.backfill = true;
  const auto r = cs::simulate(jobs, cfg);
  EXPECT_DOUBLE_EQ(r.jobs[3].first_start, 2.0);
  EXPECT_DOUBLE_EQ(r.jobs[2].first_start, 50.0);
  EXPECT_DOUBLE_EQ(r.jobs[4].first_start, 60.0);
}
