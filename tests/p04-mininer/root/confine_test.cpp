// --confine on its own, in a forked child of the test (as root): what the
// container's command can no longer do, and what it still can (threads, fork,
// files), so the filter is neither a no-op nor so tight that programs break.
#include <errno.h>
#include <gtest/gtest.h>
#include <linux/capability.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <string>
#include <thread>

#include "mininer/confine.hpp"

namespace {

// Runs `body` in a child after confine_process(); the child's exit code is the
// number of the first expectation that failed (0: all held).
int in_confined_child(int (*body)()) {
  const pid_t pid = fork();
  if (pid == 0) {
    try {
      mininer::confine_process();
    } catch (...) {
      _exit(100);
    }
    _exit(body());
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 200 + WTERMSIG(status);
}

std::string status_field(const std::string& name) {
  std::ifstream in("/proc/self/status");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(name + ":", 0) == 0) return line.substr(line.find_first_not_of(" \t", name.size() + 1));
  }
  return "";
}

TEST(Confine, TheCapabilityMaskIsDockersDefaultSet) {
  const int caps[] = {CAP_CHOWN,  CAP_DAC_OVERRIDE, CAP_FOWNER,     CAP_FSETID,     CAP_KILL,
                      CAP_SETGID, CAP_SETUID,       CAP_SETPCAP,    CAP_NET_BIND_SERVICE, CAP_NET_RAW,
                      CAP_SYS_CHROOT, CAP_MKNOD,    CAP_AUDIT_WRITE, CAP_SETFCAP};
  std::uint64_t mask = 0;
  for (const int c : caps) mask |= std::uint64_t{1} << c;
  EXPECT_EQ(mask, mininer::kDefaultCapabilities);
}

TEST(Confine, TheChildKeepsOnlyThoseCapabilitiesAndCannotGainMore) {
  EXPECT_EQ(in_confined_child([] {
              if (status_field("CapEff") != "00000000a80425fb") return 1;
              if (status_field("CapBnd") != "00000000a80425fb") return 2;
              if (status_field("NoNewPrivs") != "1") return 3;
              if (status_field("Seccomp") != "2") return 4;  // 2: filter mode
              return 0;
            }),
            0);
}

TEST(Confine, MountsNamespacesAndModulesAreRefusedWithEperm) {
  EXPECT_EQ(in_confined_child([] {
              if (mount("none", "/mnt", "tmpfs", 0, nullptr) == 0 || errno != EPERM) return 1;
              if (unshare(CLONE_NEWNS) == 0 || errno != EPERM) return 2;
              if (unshare(CLONE_NEWUSER) == 0 || errno != EPERM) return 3;
              if (syscall(SYS_finit_module, -1, "", 0) == 0 || errno != EPERM) return 4;
              if (syscall(SYS_bpf, 0, nullptr, 0) == 0 || errno != EPERM) return 5;
              if (syscall(SYS_kexec_load, 0, 0, nullptr, 0) == 0 || errno != EPERM) return 6;
              // clone3's flags are behind a pointer: it answers ENOSYS, and libc falls back to clone.
              if (syscall(SYS_clone3, nullptr, 0) == 0 || errno != ENOSYS) return 7;
              if (syscall(SYS_clone, CLONE_NEWNET | SIGCHLD, nullptr, nullptr, nullptr, 0) >= 0 || errno != EPERM) return 8;
              return 0;
            }),
            0);
}

TEST(Confine, ThreadsForkAndFilesStillWork) {
  EXPECT_EQ(in_confined_child([] {
              int ran = 0;
              std::thread t([&ran] { ran = 1; });
              t.join();
              if (ran != 1) return 1;
              const pid_t pid = fork();
              if (pid == 0) _exit(7);
              int status = 0;
              if (pid < 0 || waitpid(pid, &status, 0) != pid || WEXITSTATUS(status) != 7) return 2;
              char path[] = "/tmp/mininer-confine-XXXXXX";
              const int fd = mkstemp(path);
              if (fd < 0 || write(fd, "x", 1) != 1) return 3;
              close(fd);
              unlink(path);
              return 0;
            }),
            0);
}

TEST(Confine, TheDeniedListNamesTheCallsThatReconfigureTheKernel) {
  const auto denied = mininer::denied_syscalls();
  for (const char* name : {"mount", "umount2", "pivot_root", "unshare", "setns", "init_module", "finit_module",
                           "delete_module", "kexec_load", "bpf", "keyctl", "open_by_handle_at", "reboot"}) {
    EXPECT_NE(std::find(denied.begin(), denied.end(), name), denied.end()) << name;
  }
  EXPECT_TRUE(std::is_sorted(denied.begin(), denied.end()));
}

}  // namespace
