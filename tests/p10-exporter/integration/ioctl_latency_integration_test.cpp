// gpulab-ioctl-latency's refusals, as a user sees them: one error line naming the flag and the
// value, exit 2, before anything needs root or BPF. (Counting real traffic is root/.)
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "gpulab_test/program_run.hpp"

namespace {

using gpulab_test::run_program;

class IoctlLatencyCli : public ::testing::Test {
 protected:
  void SetUp() override {
    if (access(GPULAB_BIN_DIR "/gpulab-ioctl-latency", X_OK) != 0)
      GTEST_SKIP() << "gpulab-ioctl-latency is not built (needs clang, bpftool, libbpf-dev and "
                      "kernel BTF: see the configure summary)";
  }
};

TEST_F(IoctlLatencyCli, AMissingDeviceIsOneErrorLine) {
  const auto r = run_program("gpulab-ioctl-latency", "--device /nonexistent/nvidia0 --duration 1");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err,
            "gpulab-ioctl-latency: error: --device: '/nonexistent/nvidia0': No such file or "
            "directory\n");
}

TEST_F(IoctlLatencyCli, APlainFileIsRefusedBecauseNoDriverAnswersIt) {
  const auto r = run_program("gpulab-ioctl-latency", "--device " GPULAB_LAB_DIR "/README.md");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(
      r.err.find("error: --device: '" GPULAB_LAB_DIR "/README.md' is a plain file, not a device"),
      std::string::npos)
      << r.err;
}

TEST_F(IoctlLatencyCli, AbsurdDurationsAreRefusedOnTheirText) {
  for (const char* d : {"nan", "inf", "-1", "0", "1e999", "2592001", "12x"}) {
    const auto r =
        run_program("gpulab-ioctl-latency", std::string("--device /dev/null --duration ") + d);
    EXPECT_EQ(r.exit_code, 2) << d;
    EXPECT_NE(r.err.find("gpulab-ioctl-latency: error: --duration: "), std::string::npos)
        << d << r.err;
    EXPECT_NE(r.err.find(std::string("got '") + d + "'"), std::string::npos) << d << r.err;
  }
}

TEST_F(IoctlLatencyCli, TheDeviceFlagIsRequired) {
  const auto r = run_program("gpulab-ioctl-latency", "--duration 1");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--device is required"), std::string::npos) << r.err;
}

// Not root: one SKIPPED line and 77, after the flags were checked. As root, run it as nobody.
TEST_F(IoctlLatencyCli, WithoutRootItSaysSoAndExits77) {
  std::string prefix;
  if (geteuid() == 0) {
    if (access("/usr/bin/setpriv", X_OK) != 0) GTEST_SKIP() << "root, and no setpriv to drop it";
    prefix = "/usr/bin/setpriv --reuid=65534 --regid=65534 --clear-groups";
    const std::string probe = prefix + " test -x " GPULAB_BIN_DIR "/gpulab-ioctl-latency";
    if (std::system(probe.c_str()) != 0)
      GTEST_SKIP() << "nobody cannot run " GPULAB_BIN_DIR
                      "/gpulab-ioctl-latency (a private "
                      "checkout): the non-root path needs a user who can";
  }
  const auto r = run_program("gpulab-ioctl-latency", "--device /dev/null --duration 1",
                             gpulab_test::Stderr::kSeparate, prefix);
  EXPECT_EQ(r.exit_code, 77) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err,
            "gpulab-ioctl-latency: SKIPPED: needs root to load a BPF program (CAP_BPF and "
            "CAP_PERFMON)\n");
}

// Runs the program as root without CAP_BPF, CAP_PERFMON and CAP_SYS_ADMIN (a container's root),
// in a private mount namespace after `setup`: whether tracefs is mounted is then the test's choice,
// not whatever an earlier test or boot left on the host.
gpulab_test::ProgramRun run_as_capless_root(const std::string& setup) {
  return run_program("gpulab-ioctl-latency", "--device /dev/null --duration 1\"'",
                     gpulab_test::Stderr::kSeparate,
                     "unshare --mount --propagation private sh -c '" + setup +
                         " && PATH=/usr/sbin:/sbin:$PATH exec capsh "
                         "--drop=cap_bpf,cap_perfmon,cap_sys_admin -- -c \"");
}

bool can_drop_capabilities() {
  return access("/usr/sbin/capsh", X_OK) == 0 || access("/sbin/capsh", X_OK) == 0;
}

// With tracefs mounted, the kernel's EPERM at the BPF load is a skip with the reason, not a
// failed run.
TEST_F(IoctlLatencyCli, RootWithoutCapBpfIsASkipNotAFailure) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root, to drop its capabilities";
  if (!can_drop_capabilities()) GTEST_SKIP() << "capsh is not installed (libcap2-bin)";
  const auto r = run_as_capless_root(
      "{ mountpoint -q /sys/kernel/tracing || mount -t tracefs nodev /sys/kernel/tracing; }");
  EXPECT_EQ(r.exit_code, 77) << r.err;
  EXPECT_EQ(r.err,
            "gpulab-ioctl-latency: SKIPPED: the kernel refused to load the BPF program (Operation "
            "not permitted: no CAP_BPF and CAP_PERFMON here, or kernel lockdown)\n");
}

// Without tracefs, and without the right to mount it, the skip names the mount it needs.
TEST_F(IoctlLatencyCli, RootWithoutTracefsOrTheRightToMountItIsASkipNamingTheMount) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root, to drop its capabilities";
  if (!can_drop_capabilities()) GTEST_SKIP() << "capsh is not installed (libcap2-bin)";
  const auto r = run_as_capless_root(
      "{ umount -l /sys/kernel/tracing 2>/dev/null; umount -l /sys/kernel/debug 2>/dev/null; "
      "! test -e /sys/kernel/tracing/events; }");
  EXPECT_EQ(r.exit_code, 77) << r.err;
  EXPECT_EQ(r.err,
            "gpulab-ioctl-latency: SKIPPED: tracefs is not mounted and mounting it on "
            "/sys/kernel/tracing failed (Operation not permitted): mount -t tracefs nodev "
            "/sys/kernel/tracing\n");
}

TEST_F(IoctlLatencyCli, HelpSaysWhatItShowsAndThatItNeedsRoot) {
  const auto r = run_program("gpulab-ioctl-latency", "--help");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out.rfind("gpulab-ioctl-latency: ioctl latency per device file and request code", 0),
            0u)
      << r.out;
  EXPECT_NE(r.out.find("Needs root"), std::string::npos);
}

}  // namespace
