// --junit on a full disk: the run fails with one line and the previous report
// stays whole (it was truncated before). A 64 KiB tmpfs, filled up; root only.
#include <gtest/gtest.h>

#include <string>

#include "gpulab_test/hostile_fs.hpp"
#include "gpulab_test/program_run.hpp"

namespace {

TEST(HalConformanceRoot, JunitOnAFullDiskKeepsTheOldReport) {
  gpulab_test::SmallTmpfs tmpfs(64 * 1024);
  if (!tmpfs.error().empty()) GTEST_SKIP() << tmpfs.error();
  const auto xml = tmpfs / "junit.xml";
  const std::string old_report = "<testsuites name=\"yesterday\"/>\n";
  gpulab_test::put(xml, old_report);
  ASSERT_TRUE(tmpfs.fill());
  const auto r = gpulab_test::run_program("hal-conformance",
                                          "--backend cpu_ref --no-perf --junit " + xml.string());
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_EQ(r.err, "hal-conformance: error: --junit: cannot write '" + xml.string() +
                       "': No space left on device\n");
  EXPECT_EQ(gpulab_test::slurp(xml), old_report);
}

}  // namespace
