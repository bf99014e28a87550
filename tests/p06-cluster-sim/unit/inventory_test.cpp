// The simulated cluster through the shared inventory and back.
#include <gtest/gtest.h>

#include "cluster_sim/inventory.hpp"

namespace cs = cluster_sim;
namespace inv = gpulab::inventory;

TEST(Inventory, AClusterDescribesItsNodesGpusIslandsAndCpus) {
  const cs::Cluster c(2, 8, 4, 64);
  const cs::Shape s = cs::shape_of(c);
  EXPECT_EQ(s, (cs::Shape{2, 8, 4, 64}));
  const auto nodes = cs::to_inventory(s);
  ASSERT_EQ(nodes.size(), 2u);
  EXPECT_TRUE(inv::validate_cluster(nodes).empty());
  EXPECT_EQ(nodes[1].node, "node1");
  EXPECT_EQ(nodes[1].cpus, 64);
  ASSERT_EQ(nodes[1].accelerators.size(), 8u);
  EXPECT_EQ(nodes[1].accelerators[5].id, "gpu5");
  EXPECT_EQ(nodes[1].accelerators[5].domain.island, "node1-island1");
  EXPECT_EQ(nodes[1].accelerators[5].backend, "simulated");
  const auto back = cs::shape_from_inventory(nodes);
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(back.value(), s);
}

TEST(Inventory, ANodeWithoutIslandsIsOneIsland) {
  const cs::Shape s = cs::shape_of(cs::Cluster(3, 4));
  EXPECT_EQ(s.island_size, 0);
  const auto nodes = cs::to_inventory(s);
  EXPECT_TRUE(nodes[2].accelerators[3].domain.island.empty());
  EXPECT_EQ(cs::shape_from_inventory(nodes).value(), s);
  cs::SimConfig cfg;
  cs::apply(s, cfg);
  EXPECT_EQ(cfg.nodes, 3);
  EXPECT_EQ(cfg.gpus_per_node, 4);
  EXPECT_EQ(cfg.island_size, 0);
}

TEST(Inventory, IslandsFollowIndexesNotListOrder) {
  auto nodes = cs::to_inventory({1, 4, 2, 0});
  std::swap(nodes[0].accelerators[0], nodes[0].accelerators[3]);
  EXPECT_EQ(cs::shape_from_inventory(nodes).value().island_size, 2);
}

TEST(Inventory, ShapesTheSimulatorCannotTakeAreRefused) {
  auto uneven = cs::to_inventory({2, 8, 4, 64});
  uneven[1].accelerators.pop_back();
  EXPECT_EQ(cs::shape_from_inventory(uneven).error().message,
            "nodes[1]: 7 accelerators, but nodes[0] has 8 (the simulator needs uniform nodes)");

  auto cpus = cs::to_inventory({2, 8, 4, 64});
  cpus[1].cpus = 32;
  EXPECT_EQ(cs::shape_from_inventory(cpus).error().message,
            "nodes[1].cpus: 32, but nodes[0] has 64 (the simulator needs uniform nodes)");

  auto spanning = cs::to_inventory({2, 8, 4, 0});
  for (auto& a : spanning[1].accelerators) a.domain.island = "node0-island1";
  EXPECT_EQ(cs::shape_from_inventory(spanning).error().message,
            "nodes[1]: island 'node0-island1' also holds GPUs of nodes[0]; the simulator's islands "
            "are runs of GPUs "
            "inside one node");

  auto unequal = cs::to_inventory({1, 8, 4, 0});
  unequal[0].accelerators[4].domain.island = "node0-island0";
  EXPECT_EQ(cs::shape_from_inventory(unequal).error().message,
            "islands hold 3 to 5 GPUs; the simulator needs equal islands");

  auto wide = cs::to_inventory({1, 65, 0, 0});
  EXPECT_EQ(cs::shape_from_inventory(wide).error().message,
            "nodes[0]: 65 accelerators; the simulator takes 1 to 64 per node");

  auto invalid = cs::to_inventory({1, 2, 0, 0});
  invalid[0].accelerators[1].id = "gpu0";
  EXPECT_EQ(cs::shape_from_inventory(invalid).error().message,
            "nodes[0].accelerators[1].id: 'gpu0' is a duplicate of nodes[0].accelerators[0]'s");
  EXPECT_EQ(cs::shape_from_inventory({}).error().message, "the inventory has no nodes");
}
