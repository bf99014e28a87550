// P04's fakegpud as a test fixture part: start it on a directory, wait until
// the FUSE mount is really there, stop it with SIGTERM as a service manager
// would. Used by the fakegpu tests and by the labs that consume its device.
#pragma once

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>

#include "gpulab_test/child_process.hpp"

namespace gpulab_test {

inline std::string read_whole_file(const std::string& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), {}};
}

inline bool is_mounted(const std::string& dir) {
  return read_whole_file("/proc/self/mounts").find(" " + dir + " ") != std::string::npos;
}

class FakegpudProcess {
 public:
  enum class Started { kMounted, kCannotRunHere, kFailed };

  // Runs `GPULAB_BIN_DIR/fakegpud --foreground <mount_arg>` from `cwd` (if
  // given) with stdout and stderr in `log`, and waits up to 5 s for `mountdir`
  // (the absolute form of mount_arg) to be mounted. kCannotRunHere: fakegpud
  // exited 77 (no FUSE); kFailed: it exited otherwise or never mounted.
  Started start(const std::string& mountdir, const std::string& log,
                const std::string& mount_arg = "", const std::string& cwd = "") {
    log_ = log;
    const bool forked = process_.start([&] {
      const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      dup2(fd, 1);
      dup2(fd, 2);
      if (!cwd.empty() && chdir(cwd.c_str()) != 0) _exit(126);
      const std::string prog = std::string(GPULAB_BIN_DIR) + "/fakegpud";
      const std::string arg = mount_arg.empty() ? mountdir : mount_arg;
      execl(prog.c_str(), "fakegpud", "--foreground", arg.c_str(), static_cast<char*>(nullptr));
    });
    if (!forked) return Started::kFailed;
    for (int i = 0; i < 500 && !is_mounted(mountdir); ++i) {
      if (const auto code = process_.poll())
        return *code == 77 ? Started::kCannotRunHere : Started::kFailed;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return is_mounted(mountdir) ? Started::kMounted : Started::kFailed;
  }

  // SIGTERM; the daemon's exit code, or -1 if it was not running or died of a signal.
  int stop() { return process_.stop(); }

  // SIGKILL, as a crash would: the FUSE mount stays behind, stale (ENOTCONN).
  void kill_hard() { process_.kill_hard(); }

  [[nodiscard]] std::string log() const { return read_whole_file(log_); }

 private:
  ChildProcess process_;
  std::string log_;
};

// The part of a fixture's SetUp that starts fakegpud: the test is skipped where fakegpud cannot
// run here (its own reason: no FUSE) and fails when it does not mount. The caller returns when
// IsSkipped() or HasFatalFailure().
inline void start_fakegpud_for_test(FakegpudProcess& daemon, const std::string& mountdir,
                                    const std::string& log, const std::string& mount_arg = "",
                                    const std::string& cwd = "") {
  switch (daemon.start(mountdir, log, mount_arg, cwd)) {
    case FakegpudProcess::Started::kMounted:
      return;
    case FakegpudProcess::Started::kCannotRunHere:
      GTEST_SKIP() << daemon.log();
    case FakegpudProcess::Started::kFailed:
      FAIL() << "fakegpud did not mount: " << daemon.log();
  }
}

}  // namespace gpulab_test
