#include <gtest/gtest.h>

#include <algorithm>

#include "gpulab/inventory/accelerator.hpp"
#include "gpulab/inventory/node_inventory.hpp"

namespace inv = gpulab::inventory;

namespace {

constexpr std::uint64_t kGiB = std::uint64_t{1} << 30;

inv::Accelerator gpu(int index) {
  inv::Accelerator a;
  a.id = "GPU-" + std::to_string(index);
  a.index = index;
  a.vendor = "nvidia";
  a.backend = "cuda";
  a.model = "NVIDIA H100 80GB HBM3";
  a.memory_bytes = 80 * kGiB;
  return a;
}

// Two H100s bridged by NVLink, the first split into MIG instances.
inv::NodeInventory pair_node() {
  inv::NodeInventory n;
  n.node = "node0";
  n.cpus = 64;
  n.accelerators = {gpu(0), gpu(1)};
  n.accelerators[0].links.push_back({"GPU-1", inv::LinkKind::kNvlink, 900, 2});
  n.accelerators[1].links.push_back({"GPU-0", inv::LinkKind::kNvlink, 900, 2});
  n.accelerators[0].partitions.push_back(
      {"MIG-0-0", inv::PartitionKind::kMig, "3g.40gb", 40 * kGiB});
  n.accelerators[0].partitions.push_back(
      {"MIG-0-4", inv::PartitionKind::kMig, "3g.40gb", 40 * kGiB});
  return n;
}

// The one problem validate() reports (fails the test when there are others).
std::string only_problem(const inv::NodeInventory& n) {
  const auto p = inv::validate(n);
  EXPECT_EQ(p.size(), 1u) << (p.empty() ? "valid" : p.front());
  return p.empty() ? "" : p.front();
}

}  // namespace

TEST(Inventory, AValidNodeHasNoProblems) {
  EXPECT_TRUE(inv::validate(pair_node()).empty());
  EXPECT_EQ(pair_node().total_memory_bytes(), 160 * kGiB);
}

TEST(Inventory, FindsAcceleratorsLinksAndPartitions) {
  inv::NodeInventory n = pair_node();
  ASSERT_NE(n.find("GPU-1"), nullptr);
  EXPECT_EQ(n.find("GPU-1")->index, 1);
  EXPECT_EQ(n.find("GPU-7"), nullptr);
  const inv::Link* l = n.accelerators[0].link_to("GPU-1");
  ASSERT_NE(l, nullptr);
  EXPECT_EQ(l->kind, inv::LinkKind::kNvlink);
  EXPECT_EQ(l->bandwidth_gbps, 900);
  EXPECT_EQ(n.accelerators[0].link_to("host"), nullptr);
  ASSERT_NE(n.accelerators[0].find_partition("MIG-0-4"), nullptr);
  EXPECT_EQ(n.accelerators[0].find_partition("MIG-0-4")->profile, "3g.40gb");
  n.find("GPU-0")->health = inv::Health::unhealthy(inv::xid_reason(79));
  EXPECT_EQ(n.healthy_count(), 1u);
  EXPECT_EQ(n.accelerators[0].health.reason, "Xid 79");
}

TEST(Inventory, AbsurdMemoryNamesTheField) {
  inv::NodeInventory n = pair_node();
  n.accelerators[1].memory_bytes = 0;
  EXPECT_EQ(only_problem(n),
            "accelerators[1].memory_bytes: 0 is absurd (1 byte to 64 TiB; the field is in bytes)");
  n.accelerators[1].memory_bytes = inv::kMaxMemoryBytes + 1;
  EXPECT_NE(only_problem(n).find("accelerators[1].memory_bytes: 70368744177665 is absurd"),
            std::string::npos);
}

TEST(Inventory, DuplicateIdsAndIndexesAreReported) {
  inv::NodeInventory n = pair_node();
  n.accelerators[1].id = "GPU-0";
  n.accelerators[0].links.clear();
  n.accelerators[1].links.clear();
  EXPECT_EQ(only_problem(n), "accelerators[1].id: 'GPU-0' is a duplicate of accelerators[0]'s");
  n = pair_node();
  n.accelerators[1].index = 0;
  EXPECT_EQ(only_problem(n), "accelerators[1].index: 0 is also accelerators[0]'s");
  // Partition ids share the node's namespace with accelerator ids.
  n = pair_node();
  n.accelerators[0].partitions[1].id = "GPU-1";
  EXPECT_EQ(only_problem(n),
            "accelerators[1].id: 'GPU-1' is a duplicate of accelerators[0].partitions[1]'s");
}

TEST(Inventory, LinksMustNameARealPeer) {
  inv::NodeInventory n = pair_node();
  n.accelerators[0].links.push_back({"GPU-9", inv::LinkKind::kNvlink, 900, 2});
  EXPECT_EQ(only_problem(n),
            "accelerators[0].links[1].peer: no accelerator 'GPU-9' on node 'node0'");
  n = pair_node();
  n.accelerators[0].links[0].peer = "GPU-0";
  EXPECT_EQ(only_problem(n), "accelerators[0].links[0].peer: 'GPU-0' is the accelerator itself");
  n = pair_node();
  n.accelerators[0].links.push_back({"GPU-1", inv::LinkKind::kNvlink, 450, 2});
  EXPECT_EQ(only_problem(n), "accelerators[0].links[1]: a second nvlink link to 'GPU-1'");
  n = pair_node();
  n.accelerators[0].links[0].bandwidth_gbps = 0;
  EXPECT_EQ(only_problem(n),
            "accelerators[0].links[0].bandwidth_GBps: must be > 0 and at most 100000, got 0");
}

TEST(Inventory, HostNetworkAndOwnNodeQualifiedPeersAreLocal) {
  inv::NodeInventory n = pair_node();
  n.accelerators[0].links.push_back({"host", inv::LinkKind::kPcie, 64, 2});
  n.accelerators[0].links.push_back({"network", inv::LinkKind::kInfiniband, 50, 2});
  n.accelerators[1].links[0].peer = "node0/GPU-0";
  EXPECT_TRUE(inv::validate(n).empty());
  n.accelerators[1].links[0].peer = "node0/GPU-5";
  EXPECT_EQ(only_problem(n),
            "accelerators[1].links[0].peer: no accelerator 'GPU-5' on node 'node0'");
  n.accelerators[1].links[0].peer = "node0/GPU-0";
  n.accelerators[1].id = "host";
  EXPECT_NE(inv::validate(n).front().find("accelerators[1].id: 'host' is reserved"),
            std::string::npos);
}

TEST(Inventory, PartitionsMustFitTheirAccelerator) {
  inv::NodeInventory n = pair_node();
  n.accelerators[0].partitions.push_back(
      {"MIG-0-8", inv::PartitionKind::kMig, "1g.10gb", 10 * kGiB});
  EXPECT_EQ(
      only_problem(n),
      "accelerators[0].partitions: MIG instances hold 90.0 GiB but the accelerator has 80.0 GiB");
  n = pair_node();
  n.accelerators[0].partitions[0].profile = "";
  EXPECT_EQ(only_problem(n),
            "accelerators[0].partitions[0].profile: a MIG partition names its profile");
  n = pair_node();
  n.accelerators[0].partitions[1].memory_bytes = 0;
  EXPECT_EQ(only_problem(n),
            "accelerators[0].partitions[1].memory_bytes: 0 must be 1 byte to the accelerator's "
            "85899345920 bytes");
  // Time slices each see the whole (shared) memory: four of them do not overcommit.
  n = pair_node();
  for (int r = 0; r < 4; ++r)
    n.accelerators[1].partitions.push_back(
        {"GPU-1::" + std::to_string(r), inv::PartitionKind::kTimeSlice, "", 80 * kGiB});
  EXPECT_TRUE(inv::validate(n).empty());
  n.accelerators[1].partitions[0].profile = "1g.10gb";
  EXPECT_EQ(
      only_problem(n),
      "accelerators[1].partitions[0].profile: only MIG partitions have a profile, got '1g.10gb'");
}

TEST(Inventory, BackendHealthAndNamesAreChecked) {
  inv::NodeInventory n = pair_node();
  n.accelerators[0].backend = "cdua";
  EXPECT_EQ(only_problem(n),
            "accelerators[0].backend: unknown backend 'cdua' (known: cpu_ref, blas, fast, cuda, "
            "opencl, hip, fakegpu, simulated)");
  n = pair_node();
  n.accelerators[0].health.healthy = false;
  EXPECT_EQ(only_problem(n), "accelerators[0].health.reason: say why it is unhealthy");
  n = pair_node();
  n.node = "rack1/node0";
  EXPECT_EQ(only_problem(n), "node: 'rack1/node0' contains '/' (reserved for <node>/<id>)");
  n = pair_node();
  n.accelerators.clear();
  EXPECT_TRUE(inv::validate(n).empty()) << "a node whose accelerators are gone is still a node";
}

TEST(Inventory, EveryProblemIsReportedNotJustTheFirst) {
  inv::NodeInventory n = pair_node();
  n.accelerators[0].model = "";
  n.accelerators[1].vendor = "";
  n.cpus = -1;
  EXPECT_EQ(inv::validate(n).size(), 3u);
}

TEST(Inventory, XidHealthFollowsNvidiasDevicePlugin) {
  EXPECT_TRUE(inv::xid_marks_unhealthy(79));   // fell off the bus
  EXPECT_TRUE(inv::xid_marks_unhealthy(48));   // double-bit ECC
  EXPECT_FALSE(inv::xid_marks_unhealthy(13));  // a kernel's own fault
  EXPECT_FALSE(inv::xid_marks_unhealthy(31));
  EXPECT_EQ(inv::xid_reason(48), "Xid 48");
}

TEST(InventoryCluster, CrossNodePeersAndNamesAreCheckedAcrossNodes) {
  std::vector<inv::NodeInventory> nodes{pair_node(), pair_node()};
  nodes[1].node = "node1";
  nodes[0].accelerators[0].links.push_back({"node1/GPU-0", inv::LinkKind::kInfiniband, 50, 2});
  EXPECT_TRUE(inv::validate_cluster(nodes).empty());
  EXPECT_TRUE(inv::validate(nodes[0]).empty()) << "a lone node cannot check other nodes' peers";
  nodes[0].accelerators[0].links.back().peer = "node1/GPU-7";
  auto p = inv::validate_cluster(nodes);
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p.front(),
            "nodes[0].accelerators[0].links[1].peer: no accelerator 'GPU-7' on node 'node1'");
  nodes[0].accelerators[0].links.back().peer = "node9/GPU-0";
  p = inv::validate_cluster(nodes);
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p.front(), "nodes[0].accelerators[0].links[1].peer: no node 'node9' in the cluster");
  nodes[0].accelerators[0].links.pop_back();
  nodes[1].node = "node0";
  p = inv::validate_cluster(nodes);
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p.front(), "nodes[1].node: 'node0' is a duplicate of nodes[0]'s");
}

TEST(Inventory, KindNamesRoundTrip) {
  for (auto k : {inv::LinkKind::kNvlink, inv::LinkKind::kPcie, inv::LinkKind::kInfiniband,
                 inv::LinkKind::kEthernet})
    EXPECT_EQ(inv::parse_link_kind(inv::link_kind_name(k)), k);
  EXPECT_EQ(inv::parse_link_kind("infiniband"), std::nullopt);
  EXPECT_EQ(inv::parse_partition_kind("timeslice"), inv::PartitionKind::kTimeSlice);
  EXPECT_TRUE(inv::is_known_backend("cpu_ref"));
  EXPECT_FALSE(inv::is_known_backend("CUDA"));
}
