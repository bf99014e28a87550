// The exporter's GPUs as the shared inventory: identity from the source,
// health from the Xids it has seen.
#include <gtest/gtest.h>

#include "exporter/simulated_source.hpp"
#include "gpulab/inventory/inventory_json.hpp"

namespace inv = gpulab::inventory;

TEST(Inventory, SimulatedGpusAreAValidNode) {
  exporter::SimulatedGpus gpus(4, 7, {});
  const inv::NodeInventory n = exporter::node_inventory("sim-node", gpus.sample());
  EXPECT_TRUE(inv::validate(n).empty()) << inv::validate(n).front();
  ASSERT_EQ(n.accelerators.size(), 4u);
  const inv::Accelerator& a = n.accelerators[2];
  EXPECT_EQ(a.index, 2);
  EXPECT_EQ(a.id.rfind("GPU-", 0), 0u);
  EXPECT_EQ(a.backend, "simulated");
  EXPECT_EQ(a.model, "Simulated H100 80GB HBM3");
  EXPECT_EQ(a.memory_bytes, std::uint64_t{81559} << 20);  // what NVML reports for an H100 80GB
  EXPECT_EQ(n.healthy_count(), 4u);
}

TEST(Inventory, FallingOffTheBusMakesThatGpuUnhealthyFromItsTime) {
  exporter::SimulatedGpus gpus(8, 1, exporter::parse_injections("xid:79:3@30s,xid:13:5@10s"));
  gpus.advance_to(29);
  EXPECT_EQ(exporter::node_inventory("n", gpus.sample()).healthy_count(), 8u)
      << "Xid 13 is the application's fault, and 79 has not happened yet";
  gpus.advance_to(30);
  const inv::NodeInventory n = exporter::node_inventory("n", gpus.sample());
  EXPECT_EQ(n.healthy_count(), 7u);
  EXPECT_EQ(n.accelerators[3].health, inv::Health::unhealthy("Xid 79"));
  // As a node agent would send it.
  const auto back = inv::parse_node_inventory(inv::to_json(n).dump());
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back.value(), n);
}

TEST(Inventory, HealthFollowsTheLatestFatalXid) {
  using exporter::health_after_xids;
  EXPECT_TRUE(health_after_xids({}, std::nullopt).healthy);
  EXPECT_TRUE(health_after_xids({{13, 2}, {43, 1}}, 43).healthy);
  EXPECT_EQ(health_after_xids({{48, 1}, {79, 1}}, 48).reason, "Xid 48");
  // The last event was an application fault, but an earlier one was not.
  EXPECT_EQ(health_after_xids({{13, 1}, {94, 1}}, 13).reason, "Xid 94");
}
