// Output that cannot be written is a failed run: stdout redirected to a full
// device, and --out at one. Private device nodes (mknod); root only.
#include <gtest/gtest.h>

#include <string>

#include "gpulab_test/hostile_fs.hpp"
#include "gpulab_test/program_run.hpp"

namespace {

using gpulab_test::run_program;

TEST(ClusterSimRoot, StdoutOnAFullDeviceFailsWithOneLine) {
  gpulab_test::ScratchDir dir;
  const auto full = dir / "full";
  ASSERT_EQ(gpulab_test::make_char_device(full, 1, 7), "");
  const auto r = run_program("cluster-sim", "generate --jobs 1000 > " + full.string());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "cluster-sim: error: cannot write standard output: No space left on device\n");
  EXPECT_TRUE(gpulab_test::is_char_device(full, 1, 7));
}

TEST(ClusterSimRoot, OutOnAFullDeviceFailsAndStaysADevice) {
  gpulab_test::ScratchDir dir;
  const auto full = dir / "full";
  ASSERT_EQ(gpulab_test::make_char_device(full, 1, 7), "");
  const auto r = run_program("cluster-sim", "generate --jobs 10 --out " + full.string());
  EXPECT_NE(r.exit_code, 0);
  EXPECT_EQ(r.err,
            "cluster-sim: error: cannot write '" + full.string() + "': No space left on device\n");
  EXPECT_TRUE(gpulab_test::is_char_device(full, 1, 7));
}

}  // namespace
