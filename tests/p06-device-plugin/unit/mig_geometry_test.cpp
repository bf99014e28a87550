// MIG placement rules (80 GB A100/H100): slices, start positions, and what
// one allocation costs the other profiles.
#include <gtest/gtest.h>

#include "device_plugin/device_state.hpp"
#include "device_plugin/mig.hpp"

namespace dp = device_plugin;

namespace {
const dp::MigProfile& prof(const char* n) { return *dp::find_profile(n); }
}  // namespace

TEST(MigGeometry, AFreshGpuHolds7x1g3x2g2x3g1x4g1x7g) {
  dp::MigGpu g;
  EXPECT_EQ(g.packing(prof("1g.10gb")).size(), 7u);
  EXPECT_EQ(g.packing(prof("2g.20gb")).size(), 3u);
  EXPECT_EQ(g.packing(prof("3g.40gb")).size(), 2u);
  EXPECT_EQ(g.packing(prof("4g.40gb")).size(), 1u);
  EXPECT_EQ(g.packing(prof("7g.80gb")).size(), 1u);
}

TEST(MigGeometry, A3gAtSlice0LeavesThree1gNotFour) {
  dp::MigGpu g;
  ASSERT_TRUE(g.place(prof("3g.40gb"), 0));
  EXPECT_EQ(g.packing(prof("1g.10gb")), (std::vector<int>{4, 5, 6}));
  EXPECT_EQ(g.packing(prof("2g.20gb")), (std::vector<int>{4}));
  EXPECT_EQ(g.packing(prof("3g.40gb")), (std::vector<int>{4}));
}

TEST(MigGeometry, StartPositionsAndOverlapAreEnforced) {
  dp::MigGpu g;
  EXPECT_FALSE(g.can_place(prof("2g.20gb"), 1));  // 2g starts at 0, 2 or 4
  EXPECT_FALSE(g.can_place(prof("3g.40gb"), 2));  // 3g starts at 0 or 4
  EXPECT_FALSE(g.can_place(prof("1g.10gb"), 7));  // slice 7 only belongs to larger profiles
  ASSERT_TRUE(g.place(prof("1g.10gb"), 0));
  EXPECT_FALSE(g.can_place(prof("2g.20gb"), 0));
  EXPECT_FALSE(g.can_place(prof("7g.80gb"), 0));
  EXPECT_TRUE(g.can_place(prof("2g.20gb"), 2));
}

TEST(MigGeometry, ComputeSlicesCapAtSeven) {
  dp::MigGpu g;
  ASSERT_TRUE(g.place(prof("4g.40gb"), 0));
  ASSERT_TRUE(g.place(prof("3g.40gb"), 4));  // 4 + 3 compute, slices 0-7
  EXPECT_TRUE(g.packing(prof("1g.10gb")).empty());
  dp::MigGpu h;
  ASSERT_TRUE(h.place(prof("3g.40gb"), 4));
  ASSERT_TRUE(h.place(prof("2g.20gb"), 0));
  ASSERT_TRUE(h.place(prof("2g.20gb"), 2));  // 3 + 2 + 2 = 7 compute
  EXPECT_TRUE(h.packing(prof("1g.10gb")).empty());
}

TEST(MigGeometry, RemovingAnInstanceFreesItsSlices) {
  dp::MigGpu g;
  ASSERT_TRUE(g.place(prof("3g.40gb"), 0));
  ASSERT_TRUE(g.remove(0));
  EXPECT_FALSE(g.remove(0));
  EXPECT_EQ(g.packing(prof("1g.10gb")).size(), 7u);
}

TEST(MigGeometry, DynamicMixedNodeReadvertisesAfterEachAllocation) {
  auto node = dp::default_node();
  node.mig.layout.clear();
  node.mig.dynamic = true;
  node.mig.profiles = {"1g.10gb", "2g.20gb", "3g.40gb"};
  dp::DeviceState s(node, dp::Mode::kMig);
  ASSERT_EQ(s.resources().size(), 3u);
  EXPECT_EQ(s.list("nvidia.com/mig-1g.10gb").size(), 28u);
  EXPECT_EQ(s.list("nvidia.com/mig-2g.20gb").size(), 12u);
  EXPECT_EQ(s.list("nvidia.com/mig-3g.40gb").size(), 8u);
  const auto g0 = s.generation();
  s.allocate("nvidia.com/mig-3g.40gb", {{"MIG-0-3g.40gb-0"}});
  EXPECT_GT(s.generation(), g0);
  EXPECT_EQ(s.list("nvidia.com/mig-1g.10gb").size(), 24u);  // GPU 0: 3 left
  EXPECT_EQ(s.list("nvidia.com/mig-2g.20gb").size(), 10u);  // GPU 0: 1 left
  EXPECT_EQ(s.list("nvidia.com/mig-3g.40gb").size(), 8u);   // the allocated one is still listed
  // Slice 0 of GPU 0 is taken: a 1g there is refused.
  EXPECT_THROW(s.allocate("nvidia.com/mig-1g.10gb", {{"MIG-0-1g.10gb-0"}}), dp::DeviceError);
  EXPECT_EQ(s.allocate("nvidia.com/mig-1g.10gb", {{"MIG-0-1g.10gb-4"}}).at(0).envs.at("NVIDIA_VISIBLE_DEVICES"),
            "MIG-GPU-0/4/0");
  EXPECT_TRUE(s.release("MIG-0-3g.40gb-0"));
  EXPECT_EQ(s.list("nvidia.com/mig-2g.20gb").size(), 11u);  // GPU 0: 2g at 0 and 2 (slice 4 holds a 1g)
}
