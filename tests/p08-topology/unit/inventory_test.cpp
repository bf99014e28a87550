// topo-sim's clusters through the shared inventory and back.
#include "topology/inventory.hpp"

#include <gtest/gtest.h>

#include "gpulab/inventory/inventory_json.hpp"
#include "topology/placement.hpp"

namespace inv = gpulab::inventory;

namespace {

void expect_same(const topo::Cluster& a, const topo::Cluster& b) {
  EXPECT_EQ(a.nodes, b.nodes);
  EXPECT_EQ(a.gpus_per_node, b.gpus_per_node);
  EXPECT_EQ(a.nodes_per_island, b.nodes_per_island);
  for (auto [x, y] :
       {std::pair{&a.nvlink, &b.nvlink}, {&a.infiniband, &b.infiniband}, {&a.pcie, &b.pcie}}) {
    EXPECT_EQ(x->name, y->name);
    EXPECT_DOUBLE_EQ(x->bandwidth, y->bandwidth);
    EXPECT_DOUBLE_EQ(x->latency, y->latency);
  }
  EXPECT_DOUBLE_EQ(a.hbm_bandwidth, b.hbm_bandwidth);
}

}  // namespace

TEST(Inventory, TheCurriculumClusterDescribesItselfAndComesBack) {
  const topo::Cluster c = topo::curriculum_cluster();
  const auto nodes = topo::to_inventory(c);
  ASSERT_EQ(nodes.size(), 4u);
  EXPECT_TRUE(inv::validate_cluster(nodes).empty()) << inv::validate_cluster(nodes).front();
  const inv::Accelerator& g = nodes[1].accelerators[3];
  EXPECT_EQ(g.id, "gpu3");
  EXPECT_EQ(g.model, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(g.links.size(), 7u + 2u);  // NVLink to the node's 7 others, PCIe, InfiniBand
  EXPECT_EQ(*g.link_to("gpu0"), (inv::Link{"gpu0", inv::LinkKind::kNvlink, 900, 2}));
  EXPECT_EQ(g.link_to("host")->kind, inv::LinkKind::kPcie);
  EXPECT_EQ(g.link_to("network")->bandwidth_gbps, 50);
  EXPECT_EQ(g.link_to("node0/gpu3"), nullptr) << "no NVLink between nodes of separate islands";
  const auto back = topo::cluster_from_inventory(nodes, c.name);
  ASSERT_TRUE(back) << back.error().message;
  expect_same(back.value(), c);
}

TEST(Inventory, RackScaleIslandsSpanNodes) {
  const auto nvl72 = topo::load_cluster(std::string(GPULAB_LAB_DIR) + "/topologies/nvl72.json");
  ASSERT_TRUE(nvl72) << nvl72.error().message;
  const auto nodes = topo::to_inventory(nvl72.value());
  EXPECT_EQ(nodes[17].accelerators[0].domain.island, "island0");
  EXPECT_EQ(nodes[18].accelerators[0].domain.island, "island1");
  EXPECT_NE(nodes[0].accelerators[0].link_to("node17/gpu3"), nullptr);
  EXPECT_EQ(nodes[0].accelerators[0].link_to("node18/gpu0"), nullptr);
  const auto back = topo::cluster_from_inventory(nodes, "nvl72");
  ASSERT_TRUE(back) << back.error().message;
  expect_same(back.value(), nvl72.value());
}

TEST(Inventory, ATopologyFileMayCarryTheInventory) {
  gpulab::Json doc = {{"name", "from the platform"},
                      {"gpudirect_rdma", false},
                      {"inventory", inv::to_json(std::span<const inv::NodeInventory>(
                                        topo::to_inventory(topo::curriculum_cluster())))}};
  const auto c = topo::parse_cluster_json(doc.dump());
  ASSERT_TRUE(c) << c.error().message;
  expect_same(c.value(), topo::curriculum_cluster());
  EXPECT_EQ(c.value().name, "from the platform");
  EXPECT_FALSE(c.value().gpudirect_rdma);
  // The same placements cost the same as on the built-in cluster.
  EXPECT_DOUBLE_EQ(
      topo::tp_step_time(c.value(), topo::tp_groups(c.value(), 8, 2).front(), 1 << 28, 80),
      topo::tp_step_time(topo::curriculum_cluster(),
                         topo::tp_groups(topo::curriculum_cluster(), 8, 2).front(), 1 << 28, 80));
  doc["inventory"][2]["accelerators"][0]["memory_bytes"] = 0;
  EXPECT_EQ(topo::parse_cluster_json(doc.dump()).error().message,
            "topology.inventory: nodes[2].accelerators[0].memory_bytes: 0 is absurd (1 byte to 64 "
            "TiB; the field is "
            "in bytes)");
  doc.erase("inventory");
  doc["inventory"] = gpulab::Json::array();
  doc["nodes"] = 4;
  EXPECT_EQ(topo::parse_cluster_json(doc.dump()).error().message,
            "topology: unknown field \"nodes\" next to \"inventory\"");
}

TEST(Inventory, ShapesTheCostModelCannotTakeAreRefused) {
  auto nodes = topo::to_inventory(topo::curriculum_cluster());
  auto uneven = nodes;
  uneven[2].accelerators.pop_back();
  for (auto& a : uneven[2].accelerators)
    a.links.erase(std::remove_if(a.links.begin(), a.links.end(),
                                 [](const inv::Link& l) { return l.peer == "gpu7"; }),
                  a.links.end());
  EXPECT_EQ(topo::cluster_from_inventory(uneven, "x").error().message,
            "nodes[2]: 7 accelerators, but nodes[0] has 8 (the cost model needs uniform nodes)");

  auto split = nodes;
  split[1].accelerators[5].domain.island = "elsewhere";
  EXPECT_EQ(topo::cluster_from_inventory(split, "x").error().message,
            "nodes[1].accelerators[5].domain.island: 'elsewhere', but the node's first GPU is in "
            "'' (an island holds "
            "whole nodes)");

  auto islands = nodes;  // islands of 1, 2 and 1 nodes
  for (auto& a : islands[1].accelerators) a.domain.island = "pair";
  for (auto& a : islands[2].accelerators) a.domain.island = "pair";
  EXPECT_EQ(topo::cluster_from_inventory(islands, "x").error().message,
            "islands hold 1 to 2 nodes; the cost model needs equal islands");

  auto no_ib = nodes;
  for (auto& n : no_ib)
    for (auto& a : n.accelerators) a.links.pop_back();
  EXPECT_EQ(topo::cluster_from_inventory(no_ib, "x").error().message,
            "no ib or ethernet link in the inventory; the cost model needs NVLink, InfiniBand "
            "(peer 'network') and "
            "PCIe (peer 'host') bandwidths");

  // The slowest link of a class is the one every ring runs at.
  auto slow = nodes;
  slow[3].accelerators[6].links[0].bandwidth_gbps = 300;
  EXPECT_DOUBLE_EQ(topo::cluster_from_inventory(slow, "x").value().nvlink.bandwidth, 300e9);
  EXPECT_EQ(topo::cluster_from_inventory({}, "x").error().message, "the inventory has no nodes");
}
