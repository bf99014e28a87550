// hwfp --out at a full device: an error, and the device stays a device (the
// writer renamed over it before). A private device node (mknod); root only.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "gpulab_test/hostile_fs.hpp"
#include "gpulab_test/program_run.hpp"

namespace {

using gpulab_test::put;

void fake_host(const std::filesystem::path& root) {
  std::filesystem::create_directories(root / "etc");
  std::filesystem::create_directories(root / "proc");
  put(root / "etc/machine-id", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n");
  put(root / "proc/cpuinfo", "model name\t: Test CPU\nflags\t\t: sse2 avx2\n");
}

TEST(LicensingRoot, HwfpOutToAFullDeviceFails) {
  gpulab_test::ScratchDir dir;
  fake_host(dir / "host");
  const auto full = dir / "full";
  ASSERT_EQ(gpulab_test::make_char_device(full, 1, 7), "");
  const auto r = gpulab_test::run_program(
      "hwfp", "--root " + (dir / "host").string() + " --out " + full.string());
  EXPECT_NE(r.exit_code, 0);
  EXPECT_EQ(r.err, "hwfp: error: cannot write '" + full.string() + "': No space left on device\n");
  EXPECT_TRUE(gpulab_test::is_char_device(full, 1, 7));
}

}  // namespace
