// What mininer refuses before starting anything, and how it names a child's end.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "gpulab/errors.hpp"
#include "mininer/container.hpp"
#include "mininer/rootfs.hpp"

namespace {

namespace fs = std::filesystem;

template <typename F>
std::string usage_error(F&& f) {
  try {
    f();
  } catch (const gpulab::UsageError& e) {
    return e.what();
  }
  return "(no UsageError)";
}

mininer::RunSpec spec_with_rootfs() {
  mininer::RunSpec s;
  s.rootfs = fs::temp_directory_path().string();  // any directory passes the rootfs check
  s.argv = {"/bin/true"};
  return s;
}

TEST(Validate, NoCommand) {
  auto s = spec_with_rootfs();
  s.argv.clear();
  EXPECT_NE(usage_error([&] { mininer::validate(s); }).find("no command given"), std::string::npos);
}

TEST(Validate, MissingRootfsSaysHowToMakeOne) {
  auto s = spec_with_rootfs();
  s.rootfs = "/nonexistent/rootfs";
  const auto msg = usage_error([&] { mininer::validate(s); });
  EXPECT_NE(msg.find("is not a directory"), std::string::npos) << msg;
  EXPECT_NE(msg.find("mininer mkrootfs /nonexistent/rootfs"), std::string::npos) << msg;
}

TEST(Validate, LimitZero) {
  auto s = spec_with_rootfs();
  s.memory_mb = 0;
  EXPECT_NE(usage_error([&] { mininer::validate(s); }).find("memory limit 0 MB"),
            std::string::npos);
  s.memory_mb = 100;
  EXPECT_NO_THROW(mininer::validate(s));
}

TEST(Validate, MissingDevice) {
  auto s = spec_with_rootfs();
  s.devices.push_back(mininer::parse_device_request("/dev/fakegpu-does-not-exist"));
  EXPECT_NE(usage_error([&] { mininer::validate(s); }).find("No such file"), std::string::npos);
}

TEST(DeviceRequest, DefaultsToTheSameNameUnderDev) {
  const auto d = mininer::parse_device_request("/tmp/fgpu/fakegpu");
  EXPECT_EQ(d.host_path, "/tmp/fgpu/fakegpu");
  EXPECT_EQ(d.container_path, "/dev/fakegpu");
  EXPECT_EQ(mininer::parse_device_request("/dev/full:/dev/nvidia0").container_path, "/dev/nvidia0");
  EXPECT_THROW(mininer::parse_device_request("/dev/full:/etc/passwd"), gpulab::UsageError);
  EXPECT_THROW(mininer::parse_device_request("/dev/full:/dev/../etc/x"), gpulab::UsageError);
  EXPECT_THROW(mininer::parse_device_request(":/dev/x"), gpulab::UsageError);
}

TEST(DeviceSource, NodeOrFile) {
  const auto null = mininer::inspect_device("/dev/null");
  EXPECT_TRUE(null.is_node);
  EXPECT_EQ(null.rule, mininer::kDevNull);
  const auto file = mininer::inspect_device("/proc/self/exe");
  EXPECT_FALSE(file.is_node);
  EXPECT_FALSE(file.on_fuse);
  EXPECT_THROW(mininer::inspect_device("/tmp"), gpulab::UsageError);
}

TEST(InjectRequest, DropsTheStaticSuffix) {
  const std::string self = fs::read_symlink("/proc/self/exe").string();
  EXPECT_EQ(mininer::parse_inject_request(self).container_path,
            "/usr/bin/" + fs::path(self).filename().string());
  EXPECT_EQ(mininer::parse_inject_request(self + ":/opt/x").container_path, "/opt/x");
  EXPECT_THROW(mininer::parse_inject_request(self + ":/dev/x"), gpulab::UsageError);
  EXPECT_THROW(mininer::parse_inject_request(self + ":relative"), gpulab::UsageError);
  EXPECT_THROW(mininer::parse_inject_request("/nonexistent"), gpulab::UsageError);
}

int status_of(int code_or_signal, bool signalled) {
  const pid_t pid = fork();
  if (pid == 0) {
    if (signalled) raise(code_or_signal);
    _exit(code_or_signal);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return status;
}

TEST(WaitStatus, ExitCodesAndSignals) {
  const int killed = status_of(SIGKILL, true);
  EXPECT_EQ(mininer::describe_wait_status(killed), "killed by signal 9 (SIGKILL)");
  mininer::RunOutcome k;
  k.wait_status = killed;
  EXPECT_EQ(k.exit_code(), 137);
  const int exited = status_of(3, false);
  EXPECT_EQ(mininer::describe_wait_status(exited), "exited with status 3");
  mininer::RunOutcome e;
  e.wait_status = exited;
  EXPECT_EQ(e.exit_code(), 3);
}

TEST(NetPlan, OneSlash30PerMininer) {
  const auto a = mininer::plan_net(4242);
  EXPECT_EQ(a.host_if, "mnr4242h");
  EXPECT_EQ(a.container_if_tmp, "mnr4242c");
  EXPECT_EQ(a.host_ip, "10.200.66.73");
  EXPECT_EQ(a.container_ip, "10.200.66.74");
  const auto b = mininer::plan_net(4243);
  EXPECT_NE(a.host_ip, b.host_ip);
  EXPECT_LE(mininer::plan_net(4194303).host_if.size(), 15u) << "IFNAMSIZ";
}

TEST(Initramfs, RecognisesTheInitialRootfs) {
  EXPECT_TRUE(
      mininer::root_is_initramfs("1 1 0:2 / / rw shared:1 - rootfs rootfs rw\n"
                                 "20 1 0:5 / /proc rw - proc proc rw\n"));
  EXPECT_FALSE(
      mininer::root_is_initramfs("22 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw\n"
                                 "30 22 0:26 / /rootfs rw - tmpfs rootfs rw\n"));
  EXPECT_FALSE(mininer::root_is_initramfs(""));
}

TEST(Elf, StaticOrDynamic) {
  EXPECT_EQ(mininer::elf_is_static("/proc/self/exe"), false);  // the test itself is dynamic
  EXPECT_EQ(mininer::elf_is_static(std::string(GPULAB_BIN_DIR) + "/hog"), true);
  EXPECT_EQ(mininer::elf_is_static(std::string(GPULAB_BIN_DIR) + "/mininer-static"), true);
  EXPECT_FALSE(mininer::elf_is_static("/etc/hostname").has_value());
}

}  // namespace
