#include "gpulab/inventory/inventory_json.hpp"

#include <gtest/gtest.h>

namespace inv = gpulab::inventory;
using gpulab::Json;

namespace {

constexpr std::uint64_t kGiB = std::uint64_t{1} << 30;

// Everything the model has, each away from its default.
inv::NodeInventory full_node() {
  inv::NodeInventory n;
  n.node = "node7";
  n.cpus = 96;
  for (int i = 0; i < 2; ++i) {
    inv::Accelerator a;
    a.id = "GPU-" + std::to_string(i);
    a.index = i;
    a.vendor = "nvidia";
    a.backend = "cuda";
    a.model = "NVIDIA-H100-80GB-HBM3";
    a.memory_bytes = 80 * kGiB;
    a.memory_bandwidth_gbps = 3350;
    a.domain = {"nvl-rack0", i};
    a.links = {{"GPU-" + std::to_string(1 - i), inv::LinkKind::kNvlink, 900, 2},
               {"host", inv::LinkKind::kPcie, 64, 2.5},
               {"node8/GPU-0", inv::LinkKind::kInfiniband, 50, 2}};
    n.accelerators.push_back(a);
  }
  n.accelerators[0].partitions = {{"MIG-0-0", inv::PartitionKind::kMig, "1g.10gb", 10 * kGiB},
                                  {"MIG-0-4", inv::PartitionKind::kMig, "3g.40gb", 40 * kGiB}};
  n.accelerators[1].partitions = {{"GPU-1::0", inv::PartitionKind::kTimeSlice, "", 80 * kGiB}};
  n.accelerators[1].health = inv::Health::unhealthy("Xid 79");
  return n;
}

std::string error_of(const Json& doc) {
  const auto r = inv::node_inventory_from_json(doc);
  EXPECT_FALSE(r.ok());
  return r.ok() ? "parsed" : r.error().message;
}

}  // namespace

TEST(InventoryJson, RoundTripsEveryField) {
  const inv::NodeInventory n = full_node();
  const Json doc = inv::to_json(n);
  const auto back = inv::node_inventory_from_json(doc);
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back.value(), n);
  // Through text too, as an HTTP body would carry it.
  const auto parsed = inv::parse_node_inventory(doc.dump());
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  EXPECT_EQ(parsed.value(), n);
}

TEST(InventoryJson, WritesTheDocumentedShape) {
  const Json doc = inv::to_json(full_node());
  const Json& a = doc["accelerators"][1];
  EXPECT_EQ(doc["node"], "node7");
  EXPECT_EQ(a["memory_bytes"], 85899345920u);
  EXPECT_EQ(a["links"][2].dump(),
            R"({"peer":"node8/GPU-0","kind":"ib","bandwidth_GBps":50.0,"latency_us":2.0})");
  EXPECT_EQ(a["partitions"][0]["kind"], "timeslice");
  EXPECT_EQ(a["health"].dump(), R"({"healthy":false,"reason":"Xid 79"})");
  EXPECT_EQ(doc["accelerators"][0]["health"].dump(), R"({"healthy":true})");
}

TEST(InventoryJson, OptionalFieldsTakeTheirDefaults) {
  const auto r = inv::parse_node_inventory(R"({"node": "cpu-box", "accelerators": [
      {"id": "cpu0", "index": 0, "vendor": "cpu", "backend": "cpu_ref", "model": "x86-64", "memory_bytes": 1024}]})");
  ASSERT_TRUE(r.ok()) << r.error().message;
  const inv::Accelerator& a = r.value().accelerators.at(0);
  EXPECT_EQ(r.value().cpus, 0);
  EXPECT_EQ(a.domain.numa_node, -1);
  EXPECT_TRUE(a.domain.island.empty());
  EXPECT_TRUE(a.health.healthy);
  EXPECT_TRUE(a.links.empty() && a.partitions.empty());
}

TEST(InventoryJson, ErrorsNameTheField) {
  Json doc = inv::to_json(full_node());
  doc["accelerators"][0].erase("memory_bytes");
  EXPECT_EQ(error_of(doc), "accelerators[0].memory_bytes: missing");

  doc = inv::to_json(full_node());
  doc["accelerators"][1]["memory_bytes"] = 80.5;
  EXPECT_EQ(error_of(doc), "accelerators[1].memory_bytes: expected a whole number of bytes");

  doc = inv::to_json(full_node());
  doc["accelerators"][0]["memory_gb"] = 80;
  EXPECT_EQ(error_of(doc), "accelerators[0].memory_gb: unknown field");

  doc = inv::to_json(full_node());
  doc["accelerators"][0]["links"][1]["kind"] = "infiniband";
  EXPECT_EQ(
      error_of(doc),
      "accelerators[0].links[1].kind: unknown link kind 'infiniband' (nvlink, pcie, ib, ethernet)");

  doc = inv::to_json(full_node());
  doc["accelerators"][0]["partitions"][0]["kind"] = "vgpu";
  EXPECT_EQ(error_of(doc),
            "accelerators[0].partitions[0].kind: unknown partition kind 'vgpu' (mig, timeslice)");

  doc = inv::to_json(full_node());
  doc["accelerators"][1]["health"]["healthy"] = "no";
  EXPECT_EQ(error_of(doc), "accelerators[1].health.healthy: expected true or false");

  doc = inv::to_json(full_node());
  doc["accelerators"][1]["index"] = 4294967296LL;
  EXPECT_EQ(error_of(doc), "accelerators[1].index: too large");

  doc = inv::to_json(full_node());
  doc.erase("node");
  EXPECT_EQ(error_of(doc), "node: missing");
  EXPECT_EQ(error_of(Json::array()), "inventory: expected an object");
  EXPECT_EQ(inv::parse_node_inventory("{").error().message, "not valid JSON");
}

TEST(InventoryJson, ReadingValidatesTheModel) {
  Json doc = inv::to_json(full_node());
  doc["accelerators"][1]["id"] = "GPU-0";
  EXPECT_EQ(error_of(doc), "accelerators[1].id: 'GPU-0' is a duplicate of accelerators[0]'s");
  doc = inv::to_json(full_node());
  doc["accelerators"][0]["memory_bytes"] = 80;  // GB given where bytes belong
  EXPECT_EQ(error_of(doc),
            "accelerators[0].partitions[0].memory_bytes: 10737418240 must be 1 byte to the "
            "accelerator's 80 bytes");
}

TEST(InventoryJson, ClustersRoundTripAndCheckCrossNodePeers) {
  inv::NodeInventory peer = full_node();
  peer.node = "node8";
  for (auto& a : peer.accelerators) a.links.pop_back();  // node8 links back to nothing outside
  const std::vector<inv::NodeInventory> nodes{full_node(), peer};
  const Json doc = inv::to_json(std::span<const inv::NodeInventory>(nodes));
  ASSERT_TRUE(doc.is_array());
  const auto back = inv::cluster_from_json(doc);
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back.value(), nodes);

  const auto alone = inv::parse_cluster(Json::array({inv::to_json(full_node())}).dump());
  ASSERT_FALSE(alone.ok());
  EXPECT_EQ(alone.error().message,
            "nodes[0].accelerators[0].links[2].peer: no node 'node8' in the cluster");
  Json broken = doc;
  broken[1]["accelerators"][0].erase("model");
  EXPECT_EQ(inv::cluster_from_json(broken).error().message,
            "nodes[1].accelerators[0].model: missing");
  EXPECT_EQ(inv::cluster_from_json(Json::object()).error().message,
            "expected a list of node inventories");
}
