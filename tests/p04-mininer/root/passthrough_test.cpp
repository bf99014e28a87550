// GPU passthrough with the fake device: fakegpud serves MOUNTDIR/fakegpu
// through FUSE (p04-fakegpu), mininer passes that file into a container, and
// the static fakegpu client, injected beside it as the toolkit hook injects
// libcuda, runs its whole check suite inside. Skipped (77) with the reason
// until both fakegpud and fakegpu-client-static are built next to mininer.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "gpulab_test/fakegpud_process.hpp"

namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

const std::string kBin = GPULAB_BIN_DIR;

std::string slurp(const std::string& path) {
  return gpulab_test::read_whole_file(path);
}
bool mounted(const std::string& dir) {
  return gpulab_test::is_mounted(dir);
}

// Runs a program to completion with stdout and stderr in one file.
int run(const std::vector<std::string>& args, const std::string& log) {
  const pid_t pid = fork();
  if (pid == 0) {
    const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(fd, 1);
    dup2(fd, 2);
    std::vector<char*> argv;
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(126);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

class Passthrough : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* p : {"fakegpud", "fakegpu-client-static"})
      if (access((kBin + "/" + p).c_str(), X_OK) != 0)
        GTEST_SKIP() << kBin << "/" << p
                     << " is not built (labs/p04-fakegpu; fakegpud needs libfuse3-dev)";
    if (access("/dev/fuse", R_OK | W_OK) != 0) GTEST_SKIP() << "/dev/fuse is not available";
    if (access("/bin/busybox", X_OK) != 0) GTEST_SKIP() << "busybox-static is not installed";
    char tmpl[] = "/tmp/mininer-passthrough-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    chmod(dir_.c_str(), 0755);
    mount_ = dir_ + "/gpu";
    rootfs_ = dir_ + "/rootfs";
    fs::create_directory(mount_);
    ASSERT_EQ(run({kBin + "/mininer", "mkrootfs", rootfs_}, dir_ + "/mkrootfs.log"), 0)
        << slurp(dir_ + "/mkrootfs.log");

    daemon_log_ = dir_ + "/fakegpud.log";
    gpulab_test::start_fakegpud_for_test(daemon_, mount_, daemon_log_);
    if (IsSkipped() || HasFatalFailure()) return;
  }

  void TearDown() override {
    daemon_.stop();
    if (!mount_.empty() && mounted(mount_)) umount2(mount_.c_str(), MNT_DETACH);
    if (!dir_.empty()) {
      std::error_code ec;
      fs::remove_all(dir_, ec);
    }
  }

  std::string dir_, mount_, rootfs_, daemon_log_;
  gpulab_test::FakegpudProcess daemon_;
};

TEST_F(Passthrough, FakegpuClientPassesInsideTheContainer) {
  const std::string log = dir_ + "/mininer.log";
  // --device-cgroup too: the FUSE file is no device node, so the allow-list
  // (only /dev/null) does not stand in its way — and /dev/zero is refused.
  const int rc =
      run({kBin + "/mininer", "run", "--rootfs", rootfs_, "--device", mount_ + "/fakegpu",
           "--device-cgroup", "/bin/sh", "-c",
           "head -c 1 /dev/zero >/dev/null 2>&1 && echo zero-opened || echo zero-refused; "
           "exec /usr/bin/fakegpu-client --device /dev/fakegpu"},
          log);
  const std::string out = slurp(log);
  EXPECT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("a FUSE file, not a device node -> /dev/fakegpu (bind mount)"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("-> /usr/bin/fakegpu-client (read-only bind)"), std::string::npos) << out;
  EXPECT_NE(out.find("zero-refused"), std::string::npos) << out;
  EXPECT_NE(out.find("ALL CHECKS PASSED"), std::string::npos) << out;
  EXPECT_EQ(out.find("FAIL "), std::string::npos) << out;
}

// Rootless-style: the container's root is host uid 100000. The FUSE file
// still opens because fakegpud mounts allow_other and the file is 0666.
TEST_F(Passthrough, FakegpuClientPassesInAUserNamespace) {
  const std::string log = dir_ + "/mininer.log";
  const int rc = run(
      {kBin + "/mininer", "run", "--userns", "--rootfs", rootfs_, "--device", mount_ + "/fakegpu",
       "/bin/sh", "-c", "id -u; exec /usr/bin/fakegpu-client --device /dev/fakegpu"},
      log);
  const std::string out = slurp(log);
  EXPECT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("user namespace: container uid/gid 0-65535 = host 100000-165535"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("ALL CHECKS PASSED"), std::string::npos) << out;
}

}  // namespace
