#include "topology/cost_model.hpp"

#include <gtest/gtest.h>

#include "topology/blast_radius.hpp"
#include "topology/calibrate.hpp"
#include "topology/cluster.hpp"
#include "topology/gpudirect.hpp"
#include "topology/parallel3d.hpp"
#include "topology/placement.hpp"

namespace {

constexpr double kMiB256 = 268'435'456.0;

TEST(CostModel, RingIsBandwidthTermPlusPerHopLatency) {
  const topo::Link l{"x", 1e9, 1e-6};
  EXPECT_DOUBLE_EQ(topo::ring_allreduce_time(4, 4e9, l), 1.5 * 4 + 6e-6);
  EXPECT_DOUBLE_EQ(topo::reduce_scatter_time(4, 4e9, l), 0.75 * 4 + 3e-6);
  EXPECT_DOUBLE_EQ(topo::ring_allreduce_time(1, 4e9, l), 0.0);
  // Binary tree on 8 ranks: 3 levels up, 3 down, whole vector each.
  EXPECT_DOUBLE_EQ(topo::tree_allreduce_time(8, 1e9, l), 6 * (1.0 + 1e-6));
}

TEST(CostModel, SmallMessagesFavourTheTreeLargeOnesTheRing) {
  const topo::Link l{"x", 50e9, 2e-6};
  EXPECT_LT(topo::tree_allreduce_time(64, 1e3, l), topo::ring_allreduce_time(64, 1e3, l));
  EXPECT_GT(topo::tree_allreduce_time(64, 1e9, l), topo::ring_allreduce_time(64, 1e9, l));
}

// The six numbers the curriculum prints, from one parameter set (notes §6.3).
TEST(CurriculumTables, TensorParallelPlacement) {
  const auto c = topo::curriculum_cluster();
  const double within = topo::tp_step_time(c, topo::tp_groups(c, 8, 1).front(), kMiB256, 80);
  const double across2 = topo::tp_step_time(c, topo::tp_groups(c, 8, 2).front(), kMiB256, 80);
  const double across4 = topo::tp_step_time(c, topo::tp_groups(c, 8, 4).front(), kMiB256, 80);
  EXPECT_NEAR(within * 1e3, 43.9966, 1e-3);
  EXPECT_NEAR(across2 * 1e3, 753.859, 1e-3);
  EXPECT_DOUBLE_EQ(across2, across4);  // N stays 8: the IB bottleneck is the same
  EXPECT_NEAR(across2 / within, 17.134, 1e-3);
  EXPECT_EQ(topo::bottleneck_link(c, topo::tp_groups(c, 8, 2).front()).name, "InfiniBand");
}

TEST(CurriculumTables, FlatVersusHierarchical) {
  const auto c = topo::curriculum_cluster();
  const double flat = topo::ring_allreduce_time(32, kMiB256, c.infiniband);
  const double hier = topo::hierarchical_allreduce_time(8, 4, kMiB256, c.nvlink, c.infiniband);
  EXPECT_NEAR(flat * 1e3, 10.5259, 1e-3);
  EXPECT_NEAR(hier * 1e3, 1.5686, 1e-3);
  EXPECT_NEAR(flat / hier, 6.710, 1e-3);
}

TEST(CurriculumTables, BlastRadius) {
  const auto c = topo::curriculum_cluster();
  EXPECT_EQ(topo::worst_blast_radius(c, topo::tp_groups(c, 8, 1)), 8);
  EXPECT_EQ(topo::worst_blast_radius(c, topo::tp_groups(c, 8, 4)), 32);
  EXPECT_EQ(topo::worst_blast_radius(c, topo::tp_groups(c, 8, 2)), 16);  // not printed by the curriculum
}

TEST(BlastRadius, SpreadsThroughGroupsSharingANodeAndNoFurther) {
  topo::Cluster c = topo::curriculum_cluster();
  // Two TP-4 groups per node, packed: a failure drains one node, both groups on it stop.
  EXPECT_EQ(topo::blast_radius(c, topo::tp_groups(c, 4, 1), 0), 8);
  // A hand-made chain: group A on nodes 0+1, B on 1+2, C on node 3 → A and B stall, C runs on.
  const std::vector<topo::Group> chain{{0, 8}, {9, 16}, {24, 25}};
  EXPECT_EQ(topo::blast_radius(c, chain, 0), 4);
  EXPECT_EQ(topo::blast_radius(c, chain, 24), 2);
}

TEST(BlastRadius, SearchRespectsTheIslandConstraint) {
  const auto c = topo::curriculum_cluster();
  const auto s = topo::search_min_blast_radius(c, 8, kMiB256, 80);
  ASSERT_EQ(s.options.size(), 3u);  // 1, 2 and 4 nodes per group
  ASSERT_EQ(s.best, 0);
  EXPECT_EQ(s.options[0].blast_radius, 8);
  EXPECT_FALSE(s.options[1].island_ok);

  topo::Cluster big = c;
  big.nodes = 8;
  big.nodes_per_island = 4;  // rack-scale NVLink: TP 16 can span 2 nodes and stay on NVLink
  const auto r = topo::search_min_blast_radius(big, 16, kMiB256, 80);
  ASSERT_GE(r.best, 0);
  EXPECT_EQ(r.options[static_cast<std::size_t>(r.best)].spread, 2);
  EXPECT_EQ(r.options[static_cast<std::size_t>(r.best)].blast_radius, 16);
  EXPECT_EQ(r.options[static_cast<std::size_t>(r.best)].link, "NVLink");
}

TEST(Pipeline, BubbleEfficiencyIsMOverMPlusSMinus1) {
  EXPECT_DOUBLE_EQ(topo::pipeline_efficiency(1, 4), 0.25);
  EXPECT_NEAR(topo::pipeline_efficiency(4, 4), 0.5714, 1e-4);
  EXPECT_NEAR(topo::pipeline_efficiency(8, 4), 0.7273, 1e-4);
  EXPECT_NEAR(topo::pipeline_efficiency(16, 4), 0.8421, 1e-4);
  EXPECT_NEAR(topo::pipeline_efficiency(32, 4), 0.9143, 1e-4);
  EXPECT_DOUBLE_EQ(topo::pipeline_efficiency(5, 1), 1.0);  // one stage has no bubble
}

TEST(Search3D, EveryLayoutUsesAllGpusAndTheBestPutsTensorParallelismOnNvlink) {
  const auto c = topo::curriculum_cluster();
  const auto results = topo::search_3d(c, topo::Workload{});
  ASSERT_FALSE(results.empty());
  for (const auto& r : results) EXPECT_EQ(r.layout.tp * r.layout.pp * r.layout.dp, 32);
  for (std::size_t i = 1; i < results.size(); ++i) EXPECT_LE(results[i - 1].total(), results[i].total());
  EXPECT_EQ(results.front().tp_link, "NVLink");
  // Moving the TP dimension off the node's GPUs can only make the step slower.
  topo::Layout3D in_node{8, 4, 1, {'t', 'p', 'd'}};
  topo::Layout3D spread{8, 4, 1, {'p', 't', 'd'}};
  EXPECT_LT(topo::step_time(c, {}, in_node).total(), topo::step_time(c, {}, spread).total());
  EXPECT_EQ(topo::step_time(c, {}, spread).tp_link, "InfiniBand");
}

TEST(GpuDirect, HostBounceIsSlowerThanEitherLeg) {
  const auto c = topo::curriculum_cluster();
  const auto bounce = topo::host_bounce_link(c);
  EXPECT_NEAR(bounce.bandwidth, 1.0 / (2.0 / 64e9 + 1.0 / 50e9), 1.0);
  EXPECT_LT(bounce.bandwidth, c.infiniband.bandwidth);
  EXPECT_NEAR(c.hbm_bandwidth / c.pcie.bandwidth, 52.3, 0.05);  // the "50x cliff"
  EXPECT_FALSE(topo::without_gpudirect(c).gpudirect_rdma);
}

TEST(Calibration, FitRecoversTheLinkThatGeneratedTheSamples) {
  const topo::Link truth{"t", 2.5e9, 30e-6};
  std::vector<topo::Sample> samples;
  for (double b = 4096; b <= 16e6; b *= 4) samples.push_back({b, topo::ring_allreduce_time(4, b, truth)});
  const auto fit = topo::fit_ring_link(4, samples);
  EXPECT_NEAR(fit.bandwidth / truth.bandwidth, 1.0, 1e-6);
  EXPECT_NEAR(fit.latency / truth.latency, 1.0, 1e-6);
  EXPECT_THROW(topo::fit_ring_link(4, {samples.front()}), std::invalid_argument);
}

}  // namespace
