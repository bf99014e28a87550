// ptxc compile -o at a full device: an error, and the device stays a device.
// A private device node (mknod), never /dev/full itself; root only.
#include <gtest/gtest.h>

#include <string>

#include "gpulab_test/hostile_fs.hpp"
#include "gpulab_test/program_run.hpp"

namespace {

TEST(PtxcRoot, OutputToAFullDeviceFails) {
  gpulab_test::ScratchDir dir;
  const auto full = dir / "full";
  ASSERT_EQ(gpulab_test::make_char_device(full, 1, 7), "");
  const auto r =
      gpulab_test::run_program("ptxc", "compile " + std::string(GPULAB_LAB_DIR) +
                                           "/kernels/elementwise.ptxc -o " + full.string());
  EXPECT_NE(r.exit_code, 0);
  EXPECT_EQ(r.err, "ptxc: error: cannot write '" + full.string() + "': No space left on device\n");
  EXPECT_TRUE(gpulab_test::is_char_device(full, 1, 7));
}

}  // namespace
