// fakegpud, fakegpu-client and fakegpu-evil as a user runs them: a real FUSE
// mount, real open/ioctl system calls through the kernel. Needs /dev/fuse and
// the right to mount (root here); skipped with the reason otherwise.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "fakegpu_ioctl.h"
#include "gpulab_test/fakegpud_process.hpp"
#include "gpulab_test/program_run.hpp"

namespace {

using gpulab_test::FakegpudProcess;
using gpulab_test::is_mounted;
using gpulab_test::read_whole_file;
using gpulab_test::run_program;

// One fakegpud per test, on its own temporary directory.
class Fakegpud : public ::testing::Test {
 protected:
  void SetUp() override {
    if (access("/dev/fuse", R_OK | W_OK) != 0) GTEST_SKIP() << "/dev/fuse is not available";
    if (geteuid() != 0 && access("/usr/bin/fusermount3", X_OK) != 0)
      GTEST_SKIP() << "not root and no fusermount3: cannot mount FUSE";
    char tmpl[] = "/tmp/fakegpud-test-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    log_ = dir_ + ".log";
    // relative_mountdir_: start it as `cd /tmp && fakegpud NAME`.
    const std::string arg = relative_mountdir_ ? dir_.substr(std::string("/tmp/").size()) : dir_;
    gpulab_test::start_fakegpud_for_test(daemon_, dir_, log_, arg, relative_mountdir_ ? "/tmp" : "");
    if (IsSkipped() || HasFatalFailure()) return;
    device_ = dir_ + "/fakegpu";
  }

  // SIGTERM, as a service manager would; returns the daemon's exit code.
  int stop() { return daemon_.stop(); }

  void TearDown() override {
    stop();
    if (!dir_.empty() && is_mounted(dir_)) umount2(dir_.c_str(), MNT_DETACH);  // a stale mount
    if (!dir_.empty()) {
      rmdir(dir_.c_str());
      std::remove(log_.c_str());
    }
  }

  std::string dir_, log_, device_;
  FakegpudProcess daemon_;
  bool relative_mountdir_ = false;
};

class FakegpudRelativeMountdir : public Fakegpud {
 protected:
  FakegpudRelativeMountdir() { relative_mountdir_ = true; }
};

TEST_F(Fakegpud, ServesADeviceFileAndAStatsFile) {
  struct stat st {};
  ASSERT_EQ(stat(device_.c_str(), &st), 0);
  EXPECT_TRUE(S_ISREG(st.st_mode));
  EXPECT_EQ(st.st_mode & 0777, 0666u);
  const std::string stats = read_whole_file(dir_ + "/stats");
  EXPECT_NE(stats.find("contexts 0\n"), std::string::npos) << stats;
}

TEST_F(Fakegpud, ClientPassesEveryCheck) {
  const auto r = run_program("fakegpu-client", "--device " + device_);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("ALL CHECKS PASSED (14 passed, 1 skipped)"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("FAIL"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("SKIP  fence-mmap    no fence page on this device: mmap -> ENODEV"),
            std::string::npos)
      << r.out;
}

TEST_F(Fakegpud, StaticClientPassesToo) {
  if (access((std::string(GPULAB_BIN_DIR) + "/fakegpu-client-static").c_str(), X_OK) != 0)
    GTEST_SKIP() << "no static build (sanitizer preset)";
  const auto r = run_program("fakegpu-client-static", "--device " + device_);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("ALL CHECKS PASSED"), std::string::npos);
}

TEST_F(Fakegpud, EvilFailsCleanlyAndLeavesNothing) {
  const auto r = run_program("fakegpu-evil", "--device " + device_);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("PASS  bad-pointers       26/26"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("PASS  no-leak"), std::string::npos) << r.out;
  // The evil client's last close reaches the daemon as an asynchronous RELEASE: on a loaded
  // machine the stats can still show its context right after it exits. Wait for the
  // condition (generous deadline), then check what the daemon says.
  std::string stats;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  do {
    stats = read_whole_file(dir_ + "/stats");
    if (stats.find("contexts 0\n") != std::string::npos) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  } while (std::chrono::steady_clock::now() < deadline);
  EXPECT_NE(stats.find("contexts 0\nbuffers 0\nbytes_in_use 0\n"), std::string::npos) << stats;
}

TEST_F(Fakegpud, AProcessThatDiesHoldingBuffersGivesThemBack) {
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    const int fd = ::open(device_.c_str(), O_RDWR);
    fakegpu_alloc a{};
    a.size = 1 << 20;
    const int rc = fd >= 0 ? ::ioctl(fd, FAKEGPU_IOC_ALLOC, &a) : -1;
    _exit(rc == 0 ? 0 : 1);  // no close, no FREE: the kernel releases the file
  }
  int status = 0;
  waitpid(child, &status, 0);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  std::string stats;
  for (int i = 0; i < 200; ++i) {  // RELEASE reaches the daemon asynchronously
    stats = read_whole_file(dir_ + "/stats");
    if (stats.find("contexts 0\n") != std::string::npos) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_NE(stats.find("contexts 0\nbuffers 0\nbytes_in_use 0\n"), std::string::npos) << stats;
  EXPECT_NE(stats.find("allocs 1\n"), std::string::npos) << stats;
}

TEST_F(Fakegpud, SigtermUnmountsCleanly) {
  EXPECT_EQ(stop(), 0);
  EXPECT_FALSE(is_mounted(dir_));
  const std::string log = read_whole_file(log_);
  EXPECT_NE(log.find("fakegpud: unmounted " + dir_), std::string::npos) << log;
  EXPECT_EQ(log.find("warning"), std::string::npos) << log;
}

// A daemon that dies (SIGKILL) leaves its mount behind, answering ENOTCONN.
// fakegpud used to advise "create it first (mkdir -p DIR)" there, and the
// client printed "errno 107"; both now say it is a stale mount and how to
// unmount it.
TEST_F(Fakegpud, AStaleMountIsNamedWithHowToUnmountIt) {
  daemon_.kill_hard();
  ASSERT_TRUE(is_mounted(dir_));
  const std::string advice = dir_ + " is a stale FUSE mount: the fakegpud that served it is gone "
                             "(Transport endpoint is not connected); unmount it with `fusermount3 -u " +
                             dir_ + "` (or `umount " + dir_ + "` as root), then start fakegpud again";
  auto r = run_program("fakegpud", "--foreground " + dir_);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "fakegpud: error: " + advice + "\n");
  r = run_program("fakegpu-client", "--device " + device_);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE((r.out + r.err).find(advice), std::string::npos) << r.out << r.err;
  EXPECT_EQ((r.out + r.err).find("mkdir"), std::string::npos) << r.out << r.err;
}

// fuse_daemonize() changes to "/", so a relative MOUNTDIR used to stay mounted.
TEST_F(FakegpudRelativeMountdir, SigtermUnmountsARelativeMountdirToo) {
  EXPECT_EQ(stop(), 0);
  EXPECT_FALSE(is_mounted(dir_));
  EXPECT_NE(read_whole_file(log_).find("fakegpud: unmounted " + dir_), std::string::npos)
      << read_whole_file(log_);
}

TEST_F(Fakegpud, StraceShowsTheCurriculumsFirstIoctls) {
  if (system("command -v strace >/dev/null 2>&1") != 0) GTEST_SKIP() << "strace is not installed";
  const auto r = run_program(
      "fakegpu-client", "--device " + device_, gpulab_test::Stderr::kMerged,
      "ASAN_OPTIONS=detect_leaks=0 strace -e trace=ioctl -e signal=none");  // LSan cannot run under
                                                                            // ptrace
  ASSERT_EQ(r.exit_code, 0) << r.out;
  // The first four ioctls are INFO, ALLOC(1 MiB), SUBMIT, WAIT — raw _IOC lines, magic 0x46 'F'.
  std::vector<std::string> ioctls;
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);)
    if (line.rfind("ioctl(", 0) == 0) ioctls.push_back(line);
  const char* want[] = {
      "_IOC(_IOC_READ, 0x46, 0, 0x60)", "_IOC(_IOC_READ|_IOC_WRITE, 0x46, 0x1, 0x10)",
      "_IOC(_IOC_READ|_IOC_WRITE, 0x46, 0x3, 0x10)", "_IOC(_IOC_WRITE, 0x46, 0x4, 0x10)"};
  ASSERT_GE(ioctls.size(), 4u) << r.out;
  for (std::size_t i = 0; i < 4; ++i) {
    EXPECT_NE(ioctls[i].find(want[i]), std::string::npos) << ioctls[i];
    EXPECT_NE(ioctls[i].find(") = 0"), std::string::npos) << ioctls[i];
  }
}

TEST(FakegpuCli, BadUsageAndMissingDevices) {
  auto r = run_program("fakegpu-client", "--device /nonexistent/fakegpu");
  EXPECT_EQ(r.exit_code, 77);
  EXPECT_NE(r.err.find("fakegpu-client: SKIPPED: /nonexistent/fakegpu does not exist"),
            std::string::npos)
      << r.err;
  r = run_program("fakegpu-client", "--device /tmp");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("fakegpu-client: error: /tmp is a directory"), std::string::npos) << r.err;
  r = run_program("fakegpu-client", "--bogus");
  EXPECT_EQ(r.exit_code, 2);
  r = run_program("fakegpu-evil", "--race-submits 0 --sim");
  EXPECT_EQ(r.exit_code, 2);
  r = run_program("fakegpud", "");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("fakegpud: error:"), std::string::npos) << r.err;
  r = run_program("fakegpud", "--foreground /nonexistent-dir");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "fakegpud: error: /nonexistent-dir does not exist: create it first (mkdir -p "
                   "/nonexistent-dir)\n");
  r = run_program("fakegpud", "--foreground /etc/hostname");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "fakegpud: error: /etc/hostname is not a directory: fakegpud mounts on an empty "
                   "directory\n");
  r = run_program("fakegpud", "--ctx-quota-mb 32 --mem-total-mb 16 /tmp");
  EXPECT_EQ(r.exit_code, 2);
}

TEST(FakegpuCli, SimRunsWithoutAnyDevice) {
  auto r = run_program("fakegpu-client", "--sim");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("ALL CHECKS PASSED"), std::string::npos);
  r = run_program("fakegpu-evil", "--sim --race-submits 50 --json");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("\"failed\": 0"), std::string::npos) << r.out;
}

}  // namespace
