// --feature-file on a full disk: the write fails loudly and the labels the node
// agent already has stay. A 64 KiB tmpfs, filled up; root only (mount).
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "device_plugin/control.hpp"
#include "gpulab/errors.hpp"
#include "gpulab_test/hostile_fs.hpp"

namespace {

namespace dp = device_plugin;

TEST(FeatureFileRoot, AFullDiskKeepsTheOldLabels) {
  gpulab_test::SmallTmpfs tmpfs(64 * 1024);
  if (!tmpfs.error().empty()) GTEST_SKIP() << tmpfs.error();
  const auto path = (tmpfs / "gpu-features").string();
  dp::write_feature_file(path, {{"nvidia.com/gpu.product", "H100"}});
  ASSERT_TRUE(tmpfs.fill());
  // Small labels fail only when the file is flushed at close, large ones while writing.
  for (const std::size_t size : {std::size_t{5}, std::size_t{70000}}) {
    try {
      dp::write_feature_file(path, {{"nvidia.com/gpu.memory", std::string(size, '8')}});
      ADD_FAILURE() << "a write to a full disk succeeded (" << size << " bytes)";
    } catch (const gpulab::RunError& e) {
      EXPECT_EQ(std::string(e.what()),
                "--feature-file: cannot write '" + path + "': No space left on device");
    }
  }
  EXPECT_EQ(gpulab_test::slurp(path), "nvidia.com/gpu.product=H100\n");
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(tmpfs.path()), {}), 2);
}

}  // namespace
