#include "mininer/confine.hpp"

#include <linux/capability.h>
#include <sched.h>
#include <seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>

namespace mininer {
namespace {

// Close to moby's default seccomp profile, written as a denylist: the calls
// that profile leaves out (or allows only with CAP_SYS_ADMIN and friends,
// which --confine drops anyway), so a kernel bug behind one of them is out of
// the container's reach even if a capability check is.
constexpr std::array<std::string_view, 41> kDenied{
    "acct",          "add_key",          "bpf",           "clock_adjtime", "clock_settime",
    "create_module", "delete_module",    "finit_module",  "fsconfig",      "fsmount",
    "fsopen",        "fspick",           "get_kernel_syms", "init_module", "ioperm",
    "iopl",          "kcmp",             "kexec_file_load", "kexec_load",  "keyctl",
    "lookup_dcookie", "mount",           "mount_setattr", "move_mount",    "name_to_handle_at",
    "nfsservctl",    "open_by_handle_at", "open_tree",    "perf_event_open", "pivot_root",
    "quotactl",      "reboot",           "request_key",   "setns",         "settimeofday",
    "swapoff",       "swapon",           "syslog",        "umount2",       "unshare",
    "userfaultfd",
};

constexpr std::uint64_t kNamespaceFlags = CLONE_NEWNS | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER |
                                          CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWCGROUP;

[[noreturn]] void fail(const std::string& step, int error) {
  throw std::runtime_error("--confine: " + step + ": " + std::strerror(error));
}

void drop_capabilities() {
  // The bounding set caps what any later execve can gain; root's execve
  // otherwise regains every capability it still has in it.
  for (int cap = 0; cap <= CAP_LAST_CAP || ::prctl(PR_CAPBSET_READ, cap) >= 0; ++cap) {
    if ((kDefaultCapabilities >> cap & 1U) != 0) continue;
    if (::prctl(PR_CAPBSET_DROP, cap) != 0 && errno != EINVAL) fail("dropping capability " + std::to_string(cap), errno);
  }
  if (::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0 && errno != EINVAL) fail("clearing ambient capabilities", errno);
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  std::array<__user_cap_data_struct, 2> data{};
  for (std::size_t i = 0; i < data.size(); ++i) {
    const auto bits = static_cast<std::uint32_t>(kDefaultCapabilities >> (32 * i));
    data[i].effective = bits;
    data[i].permitted = bits;
    data[i].inheritable = 0;
  }
  if (::syscall(SYS_capset, &header, data.data()) != 0) fail("capset", errno);
}

void install_filter() {
  const std::unique_ptr<void, void (*)(scmp_filter_ctx)> ctx(seccomp_init(SCMP_ACT_ALLOW), seccomp_release);
  if (!ctx) throw std::runtime_error("--confine: seccomp_init failed");
  for (const auto name : kDenied) {
    const int nr = seccomp_syscall_resolve_name(std::string(name).c_str());
    if (nr == __NR_SCMP_ERROR) continue;  // not a system call on this architecture
    if (const int rc = seccomp_rule_add(ctx.get(), SCMP_ACT_ERRNO(EPERM), nr, 0); rc != 0) fail(std::string(name), -rc);
  }
  // clone with any namespace flag: one rule per flag (rules on one call OR together).
  for (std::uint64_t flag = 1; flag != 0; flag <<= 1) {
    if ((kNamespaceFlags & flag) == 0) continue;
    const int rc = seccomp_rule_add(ctx.get(), SCMP_ACT_ERRNO(EPERM), SCMP_SYS(clone), 1,
                                    SCMP_A0(SCMP_CMP_MASKED_EQ, flag, flag));
    if (rc != 0) fail("clone", -rc);
  }
  if (const int rc = seccomp_rule_add(ctx.get(), SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0); rc != 0) fail("clone3", -rc);
  if (const int rc = seccomp_load(ctx.get()); rc != 0) fail("loading the seccomp filter", -rc);
}

}  // namespace

std::span<const std::string_view> denied_syscalls() { return kDenied; }

void confine_process() {
  drop_capabilities();
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) fail("no_new_privs", errno);
  install_filter();
}

}  // namespace mininer
