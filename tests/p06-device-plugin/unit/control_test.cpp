// The control channel a running plugin tails for injected faults.
#include <gtest/gtest.h>

#include <fstream>

#include "device_plugin/control.hpp"

namespace dp = device_plugin;

TEST(Control, AppliesCompleteLinesOnceAndWaitsForPartialOnes) {
  dp::DeviceState s(dp::default_node(), dp::Mode::kWhole);
  std::vector<std::string> log;
  auto sink = [&](const std::string& m) { log.push_back(m); };
  std::size_t off = 0;
  std::string text = "# faults\nxid 1 79\nrecov";
  dp::apply_control(s, text, off, sink);
  EXPECT_FALSE(s.list("nvidia.com/gpu")[1].healthy);
  ASSERT_EQ(log.size(), 1u);
  EXPECT_EQ(log[0], "GPU 1 unhealthy (Xid 79)");
  text += "er 1\nbogus\nxid 9 48\n";
  dp::apply_control(s, text, off, sink);
  EXPECT_TRUE(s.list("nvidia.com/gpu")[1].healthy);
  ASSERT_EQ(log.size(), 4u);
  EXPECT_EQ(log[1], "GPU 1 healthy again");
  EXPECT_EQ(log[2], "control: ignored 'bogus' (use: xid <gpu> <code> | recover <gpu> | release <id>)");
  EXPECT_EQ(log[3], "control: no GPU 9");
  dp::apply_control(s, text, off, sink);  // nothing new
  EXPECT_EQ(log.size(), 4u);
}

TEST(Control, ReleaseForgetsAnAllocation) {
  dp::DeviceState s(dp::default_node(), dp::Mode::kWhole);
  s.allocate("nvidia.com/gpu", {{"GPU-0"}});
  std::size_t off = 0;
  std::vector<std::string> log;
  dp::apply_control(s, "release GPU-0\nrelease GPU-0\n", off, [&](const std::string& m) { log.push_back(m); });
  EXPECT_EQ(log, (std::vector<std::string>{"released GPU-0", "control: GPU-0 was not allocated"}));
  EXPECT_NO_THROW(s.allocate("nvidia.com/gpu", {{"GPU-0"}}));
}

TEST(Control, FeatureFileHasOneLabelPerLine) {
  const std::string path = testing::TempDir() + "/gpu-features";
  dp::write_feature_file(path, {{"nvidia.com/gpu.product", "H100"}, {"nvidia.com/gpu.memory", "81920"}});
  std::ifstream in(path);
  std::string a, b;
  std::getline(in, a);
  std::getline(in, b);
  EXPECT_EQ(a, "nvidia.com/gpu.memory=81920");
  EXPECT_EQ(b, "nvidia.com/gpu.product=H100");
}
