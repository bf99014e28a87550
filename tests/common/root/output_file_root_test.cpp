// gpulab::write_file where writes fail: a private /dev/full, a full tmpfs, a
// read-only mount. Root only (mknod, mount); see tests/support/gpulab_test/root_main.cpp.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <string>

#include "gpulab/errors.hpp"
#include "gpulab/output_file.hpp"
#include "gpulab/plot.hpp"
#include "gpulab/prom_text.hpp"
#include "gpulab_test/hostile_fs.hpp"

namespace {

namespace fs = std::filesystem;
using gpulab_test::put;
using gpulab_test::ScratchDir;
using gpulab_test::slurp;
using gpulab_test::SmallTmpfs;

const std::string kBig(16 * 4096, 'n');  // more than a filled 64 KiB tmpfs has left

int entries(const fs::path& dir) {
  return static_cast<int>(std::distance(fs::directory_iterator(dir), {}));
}

TEST(OutputFileRoot, APrivateDevFullStaysADeviceAndTheWriteFails) {
  ScratchDir dir;
  const fs::path full = dir / "full";
  ASSERT_EQ(gpulab_test::make_char_device(full, 1, 7), "");
  const auto r = gpulab::write_file(full, "metrics\n");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "cannot write '" + full.string() + "': No space left on device");
  EXPECT_TRUE(gpulab_test::is_char_device(full, 1, 7));
  EXPECT_EQ(entries(dir.path()), 1);
  // The prom writer every --metrics-out goes through, likewise.
  EXPECT_THROW(gpulab::prom::write_file_atomic(full, "a 1\n"), std::runtime_error);
  EXPECT_TRUE(gpulab_test::is_char_device(full, 1, 7));
}

TEST(OutputFileRoot, APrivateDevNullIsWrittenAndStaysADevice) {
  ScratchDir dir;
  const fs::path null = dir / "null";
  ASSERT_EQ(gpulab_test::make_char_device(null, 1, 3), "");
  const auto r = gpulab::write_file(null, kBig);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_TRUE(gpulab_test::is_char_device(null, 1, 3));
  EXPECT_TRUE(gpulab::check_output_path(null).ok());
}

TEST(OutputFileRoot, APlotToAFullDeviceFails) {
  // gnuplot itself exits 0 after writing its SVG to /dev/full.
  ScratchDir dir;
  const fs::path full = dir / "full";
  ASSERT_EQ(gpulab_test::make_char_device(full, 1, 7), "");
  gpulab::PlotSpec spec;
  spec.series = {{"s", {1, 2}, {3, 4}, false}};
  try {
    gpulab::write_svg_plot(spec, full.string());
    ADD_FAILURE() << "a plot written to a full device succeeded";
  } catch (const gpulab::RunError& e) {
    EXPECT_EQ(std::string(e.what()),
              "cannot write '" + full.string() + "': No space left on device");
  }
  EXPECT_TRUE(gpulab_test::is_char_device(full, 1, 7));
}

TEST(OutputFileRoot, AFullFileSystemKeepsTheOldFile) {
  SmallTmpfs fs64(64 * 1024);
  if (!fs64.error().empty()) GTEST_SKIP() << fs64.error();
  const fs::path file = fs64 / "report.xml";
  put(file, "<good/>\n");
  ASSERT_TRUE(fs64.fill());
  const auto r = gpulab::write_file(file, kBig);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "cannot write '" + file.string() + "': No space left on device");
  EXPECT_EQ(slurp(file), "<good/>\n");
  EXPECT_EQ(entries(fs64.path()), 2);  // report.xml and the filler: the temp file is gone
  const auto n = gpulab::write_new_file(fs64 / "new.key", kBig, 0600);
  ASSERT_FALSE(n.ok());
  EXPECT_FALSE(fs::exists(fs64 / "new.key"));
  EXPECT_EQ(entries(fs64.path()), 2);
}

TEST(OutputFileRoot, AReadOnlyMountKeepsTheOldFile) {
  SmallTmpfs tmpfs(64 * 1024);
  if (!tmpfs.error().empty()) GTEST_SKIP() << tmpfs.error();
  const fs::path file = tmpfs / "lab.prom";
  put(file, "a 1\n");
  const std::string ro = tmpfs.remount_read_only();
  if (!ro.empty()) GTEST_SKIP() << ro;
  const auto r = gpulab::write_file(file, "a 2\n");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "cannot write '" + file.string() + "': Read-only file system");
  EXPECT_EQ(slurp(file), "a 1\n");
  EXPECT_FALSE(gpulab::check_output_path(file).ok());
}

}  // namespace
