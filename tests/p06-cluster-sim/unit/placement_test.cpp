// The free-capacity index and the four policies' choices.
#include <gtest/gtest.h>

#include "cluster_sim/cluster.hpp"
#include "cluster_sim/placement.hpp"
#include "gpulab/errors.hpp"

namespace cs = cluster_sim;

namespace {

// Occupy `gpus` on `node` (lowest free GPUs).
void use(cs::Cluster& c, int node, int gpus) {
  c.take(cs::Slice{node, cs::lowest_bits(c.free_mask(node), gpus), 0});
}

cs::Cluster with_free(std::vector<int> free_per_node) {
  cs::Cluster c(static_cast<int>(free_per_node.size()), 8);
  for (std::size_t n = 0; n < free_per_node.size(); ++n) use(c, static_cast<int>(n), 8 - free_per_node[n]);
  return c;
}

int node_of(const std::optional<cs::Placement>& p) { return p ? p->front().node : -1; }

}  // namespace

TEST(Placement, EachPolicyPicksItsNode) {
  const auto c = with_free({3, 8, 5, 4});
  EXPECT_EQ(node_of(cs::place(c, cs::Policy::kFirstFit, 3, 0)), 0);  // first that fits
  EXPECT_EQ(node_of(cs::place(c, cs::Policy::kBestFit, 4, 0)), 3);   // leaves 0
  EXPECT_EQ(node_of(cs::place(c, cs::Policy::kBestFit, 5, 0)), 2);
  EXPECT_EQ(node_of(cs::place(c, cs::Policy::kSpread, 1, 0)), 1);    // emptiest
  EXPECT_FALSE(cs::place(with_free({7, 7}), cs::Policy::kBestFit, 8, 0));
}

TEST(Placement, TiesGoToTheLowestNode) {
  const auto c = with_free({2, 6, 6, 2});
  EXPECT_EQ(node_of(cs::place(c, cs::Policy::kBestFit, 2, 0)), 0);
  EXPECT_EQ(node_of(cs::place(c, cs::Policy::kSpread, 2, 0)), 1);
}

TEST(Placement, ExcludedNodesAreSkipped) {
  const auto c = with_free({8, 8, 8});
  const std::vector<int> ex{0, 1};
  EXPECT_EQ(node_of(cs::place(c, cs::Policy::kFirstFit, 4, 0, ex)), 2);
}

TEST(Placement, GangsTakeWholeNodesPlusTheRemainderAtomically) {
  auto c = with_free({8, 8, 3, 8});
  const auto p = cs::place(c, cs::Policy::kBestFit, 19, 0);
  ASSERT_TRUE(p);
  ASSERT_EQ(p->size(), 3u);
  EXPECT_EQ((*p)[0].node, 0);
  EXPECT_EQ((*p)[1].node, 1);
  EXPECT_EQ((*p)[2].node, 2);  // the 3-GPU remainder fills node 2 exactly
  EXPECT_FALSE(cs::place(c, cs::Policy::kBestFit, 28, 0));  // 3 whole + 4 more: no node has 4
  EXPECT_EQ(c.total_free(), 27);
}

TEST(Placement, CpuDemandMustFitOnTheSameNode) {
  cs::Cluster c(2, 8, 0, 64);
  c.take(cs::Slice{0, 0b1, 60});  // node 0: 7 GPUs but only 4 CPUs free
  EXPECT_EQ(node_of(cs::place(c, cs::Policy::kFirstFit, 1, 16)), 1);
  EXPECT_EQ(node_of(cs::place(c, cs::Policy::kFirstFit, 1, 4)), 0);
}

TEST(Topology, TopologyAwareKeepsJobsInsideOneIsland) {
  cs::Cluster c(1, 8, 4);
  c.take(cs::Slice{0, 0b0000'0011, 0});  // island 0 has 2 free, island 1 has 4
  const auto ff = cs::place(c, cs::Policy::kFirstFit, 4, 0);
  const auto ta = cs::place(c, cs::Policy::kTopologyAware, 4, 0);
  ASSERT_TRUE(ff && ta);
  EXPECT_EQ(cs::span_of(c, *ff).islands, 2);  // GPUs 2,3,4,5
  EXPECT_EQ(cs::span_of(c, *ta).islands, 1);  // GPUs 4..7
  // A 2-GPU job goes to the tightest island: island 0's last two GPUs.
  const auto small = cs::place(c, cs::Policy::kTopologyAware, 2, 0);
  ASSERT_TRUE(small);
  EXPECT_EQ(small->front().mask, 0b0000'1100u);
}

TEST(Cluster, StrandedCountsFreeGpusNoPendingJobCanUse) {
  const auto c = with_free({6, 6, 6, 6});
  EXPECT_EQ(c.free_on_nodes_below(8), 24);  // a pending 8-GPU job can use none of them
  EXPECT_EQ(c.free_on_nodes_below(6), 0);
}

TEST(Cluster, RejectsImpossibleShapes) {
  EXPECT_THROW(cs::Cluster(0, 8), gpulab::UsageError);
  EXPECT_THROW(cs::Cluster(2, 65), gpulab::UsageError);
  EXPECT_THROW(cs::Cluster(2, 8, 3), gpulab::UsageError);
  EXPECT_THROW(cs::parse_policy("random"), gpulab::UsageError);
}

TEST(Cluster, TakingBusyGpusIsABug) {
  cs::Cluster c(1, 8);
  c.take(cs::Slice{0, 0b1, 0});
  EXPECT_THROW(c.take(cs::Slice{0, 0b1, 0}), std::logic_error);
}
