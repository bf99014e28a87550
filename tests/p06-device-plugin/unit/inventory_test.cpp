// The plugin's node as the shared inventory: what a node agent would report.
#include <gtest/gtest.h>

#include "device_plugin/device_state.hpp"
#include "gpulab/inventory/inventory_json.hpp"

namespace dp = device_plugin;
namespace inv = gpulab::inventory;

namespace {
constexpr std::uint64_t kGiB = std::uint64_t{1} << 30;
}  // namespace

TEST(Inventory, WholeModeIsTheConfiguredGpusWithoutPartitions) {
  const inv::NodeInventory n = dp::DeviceState(dp::default_node(), dp::Mode::kWhole).inventory();
  ASSERT_EQ(n.accelerators.size(), 4u);
  const inv::Accelerator& g = n.accelerators[3];
  EXPECT_EQ(g.id, "GPU-3");
  EXPECT_EQ(g.vendor, "nvidia");
  EXPECT_EQ(g.backend, "cuda");
  EXPECT_EQ(g.memory_bytes, 80 * kGiB);
  EXPECT_EQ(g.domain.numa_node, 1);
  ASSERT_NE(g.link_to("GPU-2"), nullptr);
  EXPECT_TRUE(g.partitions.empty());
  EXPECT_TRUE(inv::validate(n).empty());
}

TEST(Inventory, TimeSlicesShareTheirGpusMemory) {
  const inv::NodeInventory n =
      dp::DeviceState(dp::default_node(), dp::Mode::kTimeslice).inventory();
  const auto& parts = n.accelerators[1].partitions;
  ASSERT_EQ(parts.size(), 4u);
  EXPECT_EQ(parts[3], (inv::Partition{"GPU-1::3", inv::PartitionKind::kTimeSlice, "", 80 * kGiB}));
  EXPECT_TRUE(inv::validate(n).empty());
}

TEST(Inventory, StaticMigInstancesHaveTheIdsListAndWatchSends) {
  dp::DeviceState s(dp::default_node(), dp::Mode::kMig);
  const inv::NodeInventory n = s.inventory();
  const auto devices = s.list("nvidia.com/mig-1g.10gb");
  std::size_t partitions = 0;
  for (const auto& a : n.accelerators) partitions += a.partitions.size();
  EXPECT_EQ(partitions, devices.size());
  for (const auto& d : devices) {
    const inv::Partition* p = n.accelerators[static_cast<std::size_t>(d.gpu)].find_partition(d.id);
    ASSERT_NE(p, nullptr) << d.id;
    EXPECT_EQ(p->profile, "1g.10gb");
    EXPECT_EQ(p->memory_bytes, 10 * kGiB);  // one of 8 memory slices
  }
}

TEST(Inventory, DynamicMigListsOnlyInstancesThatExist) {
  dp::DeviceState s(dp::load_node_config(std::string(GPULAB_LAB_DIR) + "/config/mig-dynamic.json"),
                    dp::Mode::kMig);
  for (const auto& a : s.inventory().accelerators) EXPECT_TRUE(a.partitions.empty());
  s.allocate("nvidia.com/mig-3g.40gb", {{"MIG-2-3g.40gb-4"}});
  const inv::NodeInventory n = s.inventory();
  ASSERT_EQ(n.accelerators[2].partitions.size(), 1u);
  EXPECT_EQ(n.accelerators[2].partitions[0],
            (inv::Partition{"MIG-2-3g.40gb-4", inv::PartitionKind::kMig, "3g.40gb", 40 * kGiB}));
  EXPECT_TRUE(inv::validate(n).empty());
  s.release("MIG-2-3g.40gb-4");
  EXPECT_TRUE(s.inventory().accelerators[2].partitions.empty());
}

TEST(Inventory, AnXidShowsAsUnhealthyWithItsCode) {
  dp::DeviceState s(dp::default_node(), dp::Mode::kWhole);
  s.mark_unhealthy(2, 13);  // injected on purpose: even an application Xid counts here
  inv::NodeInventory n = s.inventory();
  EXPECT_EQ(n.accelerators[2].health, inv::Health::unhealthy("Xid 13"));
  EXPECT_EQ(n.healthy_count(), 3u);
  // A node agent sends it as JSON; the other side reads the same node back.
  const auto back = inv::node_inventory_from_json(inv::to_json(n));
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back.value(), n);
  s.mark_healthy(2);
  EXPECT_EQ(s.inventory().healthy_count(), 4u);
}

TEST(Inventory, AFakegpuNodeSaysSo) {
  const inv::NodeInventory n =
      dp::DeviceState(dp::load_node_config(std::string(GPULAB_LAB_DIR) + "/config/fakegpu.json"),
                      dp::Mode::kWhole)
          .inventory();
  ASSERT_EQ(n.accelerators.size(), 1u);
  EXPECT_EQ(n.accelerators[0].backend, "fakegpu");
  EXPECT_EQ(n.accelerators[0].vendor, "gpulab");
  EXPECT_EQ(n.accelerators[0].model, "gpulab-fakegpu");
}
