// --metrics-out at a character device: written in place, never renamed over.
// Private device nodes (mknod), never /dev/full itself; root only.
#include <gtest/gtest.h>

#include <string>

#include "gpulab_test/hostile_fs.hpp"
#include "gpulab_test/program_run.hpp"

namespace {

using gpulab_test::run_program;

TEST(CachingAllocMetricsOutRoot, AFullDeviceIsAnErrorAndStaysADevice) {
  gpulab_test::ScratchDir dir;
  const auto full = dir / "full";
  ASSERT_EQ(gpulab_test::make_char_device(full, 1, 7), "");
  const auto r =
      run_program("caching-alloc", "replay traces/sample.csv --metrics-out " + full.string());
  EXPECT_NE(r.exit_code, 0);
  EXPECT_EQ(r.err, "caching-alloc: error: --metrics-out: cannot write '" + full.string() +
                       "': No space left on device\n");
  EXPECT_TRUE(gpulab_test::is_char_device(full, 1, 7));
}

TEST(CachingAllocMetricsOutRoot, ANullDeviceIsWrittenAndStaysADevice) {
  gpulab_test::ScratchDir dir;
  const auto null = dir / "null";
  ASSERT_EQ(gpulab_test::make_char_device(null, 1, 3), "");
  const auto r =
      run_program("caching-alloc", "replay traces/sample.csv --metrics-out " + null.string());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(gpulab_test::is_char_device(null, 1, 3));
}

}  // namespace
