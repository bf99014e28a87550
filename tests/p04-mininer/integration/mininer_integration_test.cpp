// mininer and hog as a user runs them, for what needs no root: bad arguments
// exit 2 with one clear line, hog allocates what it says.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "gpulab_test/program_run.hpp"

namespace {

using gpulab_test::run_program;

// One line on stderr, "mininer: error: ...", containing `what`.
void expect_usage_error(const gpulab_test::ProgramRun& r, const std::string& what) {
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(r.err.rfind("mininer: error: ", 0), 0u) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.err.find(what), std::string::npos) << r.err;
}

TEST(MininerCli, NoCommand) {
  expect_usage_error(run_program("mininer", "run --rootfs /tmp"), "no command given");
}

TEST(MininerCli, MissingRootfs) {
  expect_usage_error(run_program("mininer", "run --rootfs /nonexistent/rootfs /bin/sh"),
                     "rootfs '/nonexistent/rootfs' is not a directory");
}

TEST(MininerCli, LimitZero) {
  expect_usage_error(run_program("mininer", "run-limited 0 --rootfs /tmp /bin/sh"),
                     "memory limit 0 MB");
}

TEST(MininerCli, LimitNegativeIsRefusedNotWrapped) {
  // Before: CLI11 read -1 as 2^64-1 and the error spoke of 18446744073709551615 MB.
  const auto r = run_program("mininer", "run-limited -1 --rootfs /tmp /bin/sh");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(r.err, "mininer: error: MB: must be a whole number in [0, 2^64-1], got '-1' (see --help)\n");
}

TEST(MininerCli, LimitNotANumber) {
  const auto r = run_program("mininer", "run-limited lots /bin/sh");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("MB"), std::string::npos) << r.err;
}

TEST(MininerCli, NoSubcommand) {
  const auto r = run_program("mininer", "");
  EXPECT_EQ(r.exit_code, 2) << r.err;
}

TEST(MininerCli, DeviceThatDoesNotExist) {
  expect_usage_error(
      run_program("mininer", "run --rootfs /tmp --device /dev/fakegpu-missing /bin/sh"),
      "--device /dev/fakegpu-missing: No such file or directory");
}

TEST(MininerCli, DevicePathOutsideDev) {
  expect_usage_error(
      run_program("mininer", "run --rootfs /tmp --device /dev/null:/etc/null /bin/sh"),
      "must be under /dev/");
}

TEST(MininerCli, BadCgroupVersion) {
  const auto r = run_program("mininer", "run --cgroup v3 --rootfs /tmp /bin/sh");
  EXPECT_EQ(r.exit_code, 2) << r.err;
}

TEST(MininerCli, HelpListsTheSubcommands) {
  const auto r = run_program("mininer", "--help");
  EXPECT_EQ(r.exit_code, 0);
  for (const char* s : {"run", "run-limited", "mkrootfs"})
    EXPECT_NE(r.out.find(s), std::string::npos) << s;
}

TEST(MininerCli, RunHelpListsEveryFlag) {
  const auto r = run_program("mininer", "run --help");
  EXPECT_EQ(r.exit_code, 0);
  for (const char* s : {"--rootfs", "--chroot", "--device", "--inject", "--device-cgroup", "--net",
                        "--userns", "--cgroup"})
    EXPECT_NE(r.out.find(s), std::string::npos) << s;
}

TEST(Hog, AllocatesAndReports) {
  const auto r = run_program("hog", "25");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("hog: 10 MB\nhog: 20 MB\nhog: 25 MB\nhog: allocated and touched 25 MB\n"),
            std::string::npos)
      << r.out;
}

TEST(Hog, BadArguments) {
  for (const char* args : {"", "0", "-5", "abc", "10x", "1 2", "99999999999"}) {
    const auto r = run_program("hog", args);
    EXPECT_EQ(r.exit_code, 2) << "hog " << args;
    EXPECT_EQ(r.err.rfind("hog: error: ", 0), 0u) << r.err;
  }
}

TEST(Mkrootfs, BuildsABusyboxTree) {
  if (access("/bin/busybox", X_OK) != 0) GTEST_SKIP() << "busybox-static is not installed";
  char tmpl[] = "/tmp/mininer-mkrootfs-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const std::string dir = std::string(tmpl) + "/rootfs";
  const auto r = run_program("mininer", "mkrootfs " + dir);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("static, from /bin/busybox"), std::string::npos) << r.out;
  namespace fs = std::filesystem;
  EXPECT_TRUE(fs::is_symlink(dir + "/bin/sh"));
  EXPECT_EQ(fs::read_symlink(dir + "/bin/sh"), "/bin/busybox");
  for (const char* d : {"proc", "sys", "dev", "tmp"})
    EXPECT_TRUE(fs::is_directory(dir + "/" + d)) << d;
  EXPECT_TRUE(fs::exists(dir + "/hog")) << "hog is copied from beside mininer";
  // Refreshing an existing rootfs works too.
  EXPECT_EQ(run_program("mininer", "mkrootfs " + dir).exit_code, 0);
  fs::remove_all(tmpl);
}

TEST(Mkrootfs, RefusesAFile) {
  expect_usage_error(run_program("mininer", "mkrootfs /etc/hostname"), "is not a directory");
}

}  // namespace
