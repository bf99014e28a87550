#include "membench/cache_topology.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace membench {
namespace {

namespace fs = std::filesystem;

// A fake /sys/devices/system/cpu/cpu0/cache tree.
class FakeSysfs : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("membench-sysfs-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
            "-" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  void index(int i, const std::string& level, const std::string& type, const std::string& size) {
    const auto d = dir_ / ("index" + std::to_string(i));
    fs::create_directories(d);
    std::ofstream(d / "level") << level << "\n";
    std::ofstream(d / "type") << type << "\n";
    std::ofstream(d / "size") << size << "\n";
    std::ofstream(d / "coherency_line_size") << "64\n";
    std::ofstream(d / "shared_cpu_list") << "0\n";
  }
  fs::path dir_;
};

TEST_F(FakeSysfs, ReadsDataAndUnifiedLevelsInOrder) {
  index(3, "3", "Unified", "32768K");
  index(0, "1", "Data", "32K");
  index(1, "1", "Instruction", "32K");
  index(2, "2", "Unified", "1024K");
  const auto t = read_cache_topology(dir_.string());
  ASSERT_EQ(t.data_levels.size(), 3U);
  EXPECT_EQ(t.data_levels[0].level, 1);
  EXPECT_EQ(t.data_levels[0].size, 32U << 10);
  EXPECT_EQ(t.data_levels[1].size, 1U << 20);
  EXPECT_EQ(t.data_levels[2].size, 32U << 20);
  EXPECT_EQ(t.last_level_size(), 32U << 20);
}

TEST_F(FakeSysfs, LabelsABufferWithTheSmallestLevelThatHoldsIt) {
  index(0, "1", "Data", "48K");
  index(1, "2", "Unified", "2048K");
  index(2, "3", "Unified", "36864K");
  const auto t = read_cache_topology(dir_.string());
  EXPECT_EQ(t.label_for(4 << 10), "L1");
  EXPECT_EQ(t.label_for(48 << 10), "L1");
  EXPECT_EQ(t.label_for(64 << 10), "L2");
  EXPECT_EQ(t.label_for(2 << 20), "L2");
  EXPECT_EQ(t.label_for(4 << 20), "L3");
  EXPECT_EQ(t.label_for(36 << 20), "L3");
  EXPECT_EQ(t.label_for(64 << 20), "DRAM");
}

TEST_F(FakeSysfs, SkipsMalformedEntries) {
  index(0, "1", "Data", "32K");
  index(1, "x", "Unified", "1024K");
  index(2, "3", "Unified", "lots");
  const auto t = read_cache_topology(dir_.string());
  ASSERT_EQ(t.data_levels.size(), 1U);
  EXPECT_EQ(t.label_for(64 << 10), "DRAM");
}

TEST(CacheTopology, MissingDirectorySaysWhyAndLabelsEverythingDram) {
  const auto t = read_cache_topology("/nonexistent/membench/cache");
  EXPECT_TRUE(t.empty());
  EXPECT_NE(t.source.find("not found"), std::string::npos);
  EXPECT_EQ(t.label_for(4096), "DRAM");
}

}  // namespace
}  // namespace membench
