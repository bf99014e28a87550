// mininer's containers, as root: isolation (hostname, PID 1, mounts), the OOM
// demo, the device allow-list on cgroup v1 and v2, passthrough of a device,
// user and network namespaces, and that every cgroup is removed on every exit
// path. Each test builds its own small rootfs (busybox symlinks + hog).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

bool contains(const std::string& hay, const std::string& needle) {
  return hay.find(needle) != std::string::npos;
}

// A program started with stdout and stderr in files.
struct Proc {
  pid_t pid = -1;
  std::string out_path, err_path;
  int exit_code = -1;
  std::string out() const { return slurp(out_path); }
  std::string err() const { return slurp(err_path); }
  int wait() {
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    return exit_code;
  }
  // Polls stderr until `text` appears (or the deadline passes).
  bool wait_for_err(const std::string& text, std::chrono::milliseconds deadline = 10s) const {
    for (auto t = 0ms; t < deadline; t += 10ms) {
      if (contains(err(), text)) return true;
      std::this_thread::sleep_for(10ms);
    }
    return false;
  }
};

// The cgroup directories mininer reported creating ("mininer: cgroup memory v1 /sys/...").
std::vector<std::string> cgroup_paths(const std::string& err) {
  std::vector<std::string> out;
  static const std::regex line(R"(mininer: cgroup \S+ v[12] (\S+))");
  for (std::sregex_iterator it(err.begin(), err.end(), line), end; it != end; ++it)
    out.push_back((*it)[1]);
  return out;
}

class Container : public ::testing::Test {
 protected:
  void SetUp() override {
    if (access("/bin/busybox", X_OK) != 0)
      GTEST_SKIP() << "busybox-static is not installed (apt-get install busybox-static)";
    char tmpl[] = "/tmp/mininer-test-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    chmod(dir_.c_str(), 0755);  // --userns: host uid 100000 must reach the rootfs
    rootfs_ = dir_ + "/rootfs";
    Proc p = spawn({"mkrootfs", rootfs_});
    ASSERT_EQ(p.wait(), 0) << p.err();
  }
  void TearDown() override {
    if (!dir_.empty()) {
      std::error_code ec;
      fs::remove_all(dir_, ec);
    }
  }

  Proc spawn(const std::vector<std::string>& args, const std::string& program = "mininer") {
    Proc p;
    const std::string tag = std::to_string(++runs_);
    p.out_path = dir_ + "/out." + tag;
    p.err_path = dir_ + "/err." + tag;
    p.pid = fork();
    if (p.pid == 0) {
      const int o = ::open(p.out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      const int e = ::open(p.err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      const int in = ::open("/dev/null", O_RDONLY);
      dup2(o, 1);
      dup2(e, 2);
      dup2(in, 0);
      const std::string exe =
          program.front() == '/' ? program : std::string(GPULAB_BIN_DIR) + "/" + program;
      std::vector<char*> argv{const_cast<char*>(exe.c_str())};
      for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
      argv.push_back(nullptr);
      execv(argv[0], argv.data());
      _exit(126);
    }
    return p;
  }

  // mininer run --rootfs R <flags...> /bin/sh -c SCRIPT
  Proc sh(const std::string& script, std::vector<std::string> flags = {},
          const std::string& sub = "run") {
    std::vector<std::string> args{sub};
    if (sub == "run-limited") {
      args.push_back(flags.front());
      flags.erase(flags.begin());
    }
    args.insert(args.end(), {"--rootfs", rootfs_});
    args.insert(args.end(), flags.begin(), flags.end());
    args.insert(args.end(), {"/bin/sh", "-c", script});
    Proc p = spawn(args);
    p.wait();
    return p;
  }

  void expect_cgroups_removed(const Proc& p, std::size_t expected_count) {
    const auto paths = cgroup_paths(p.err());
    EXPECT_EQ(paths.size(), expected_count) << p.err();
    for (const auto& path : paths) EXPECT_FALSE(fs::exists(path)) << path << " was left behind";
  }

  std::string dir_, rootfs_;
  int runs_ = 0;
};

TEST_F(Container, HostnameIsMiniboxInsideOnly) {
  char before[256] = {};
  gethostname(before, sizeof before - 1);
  const Proc p = sh("hostname");
  EXPECT_EQ(p.exit_code, 0) << p.err();
  EXPECT_EQ(p.out(), "minibox\n");
  char after[256] = {};
  gethostname(after, sizeof after - 1);
  EXPECT_STREQ(before, after);
  EXPECT_STRNE(after, "minibox");
}

TEST_F(Container, CommandIsPid1AndSeesOnlyItsOwnProcesses) {
  const Proc p = sh("echo pid $$; ls -d /proc/[0-9]*");
  EXPECT_EQ(p.exit_code, 0) << p.err();
  // The shell expands the glob itself: PID 1 is the only process in this
  // namespace's fresh /proc; the host's hundreds are invisible.
  EXPECT_EQ(p.out(), "pid 1\n/proc/1\n");
}

TEST_F(Container, MountsStayInsideAndTheHostIsUnchangedAfterwards) {
  const std::string before = slurp("/proc/self/mountinfo");
  Proc p = spawn({"run", "--rootfs", rootfs_, "/bin/sh", "-c",
                  "mount -t tmpfs none /tmp && echo mounted >&2 && sleep 1"});
  ASSERT_TRUE(p.wait_for_err("mounted")) << p.err();
  // While it runs: none of its mounts (rootfs bind, /proc, /dev, /tmp) is visible on the host.
  const std::string during = slurp("/proc/self/mountinfo");
  EXPECT_FALSE(contains(during, rootfs_)) << "a container mount leaked to the host";
  EXPECT_EQ(p.wait(), 0) << p.err();
  EXPECT_FALSE(contains(slurp("/proc/self/mountinfo"), rootfs_));
  // The host's own /proc is still the host's: it sees this test (not PID 1 of a namespace).
  EXPECT_TRUE(fs::exists("/proc/" + std::to_string(getpid())));
  EXPECT_TRUE(contains(before, " /proc "));
}

TEST_F(Container, ChrootVariantAlsoIsolates) {
  const Proc p = sh("echo $$ $(hostname)", {"--chroot"});
  EXPECT_EQ(p.exit_code, 0) << p.err();
  EXPECT_EQ(p.out(), "1 minibox\n");
  EXPECT_TRUE(contains(p.err(), "chroot into")) << p.err();
}

TEST_F(Container, OomKillsHogAt100MbAndTheHostIsFine) {
  Proc p = spawn({"run-limited", "100", "--rootfs", rootfs_, "/hog", "200"});
  EXPECT_EQ(p.wait(), 137) << p.err();
  const std::string out = p.out(), err = p.err();
  EXPECT_TRUE(contains(out, "hog: 90 MB\n")) << out;
  EXPECT_FALSE(contains(out, "hog: 110 MB")) << out;
  EXPECT_FALSE(contains(out, "allocated and touched")) << out;
  EXPECT_TRUE(contains(err, "memory limit 100 MiB")) << err;
  EXPECT_TRUE(contains(err, "container killed by signal 9 (SIGKILL)")) << err;
  EXPECT_TRUE(std::regex_search(err, std::regex("oom_kill [1-9]"))) << err;
  expect_cgroups_removed(p, 1);
  // The host is not limited: this process touches 200 MB without trouble.
  std::vector<char> big(200u << 20);
  for (std::size_t i = 0; i < big.size(); i += 4096) big[i] = 1;
  EXPECT_EQ(big[4096], 1);
}

TEST_F(Container, UnderTheLimitNothingIsKilled) {
  Proc p = spawn({"run-limited", "100", "--rootfs", rootfs_, "/hog", "40"});
  EXPECT_EQ(p.wait(), 0) << p.err();
  EXPECT_TRUE(contains(p.out(), "hog: allocated and touched 40 MB")) << p.out();
  EXPECT_TRUE(contains(p.err(), "oom_kill 0")) << p.err();
  expect_cgroups_removed(p, 1);
}

constexpr const char* kDeviceProbe =
    "echo x > /dev/null && echo null-ok; "
    "head -c 1 /dev/zero > /dev/null && echo zero-ok || echo zero-refused; "
    "head -c 1 /dev/urandom > /dev/null && echo urandom-ok || echo urandom-refused; "
    "mknod /dev/zero2 c 1 5 && echo mknod-ok || echo mknod-refused";

TEST_F(Container, WithoutDeviceCgroupEveryStandardNodeOpens) {
  const Proc p = sh(kDeviceProbe);
  EXPECT_EQ(p.out(), "null-ok\nzero-ok\nurandom-ok\nmknod-ok\n") << p.err();
}

TEST_F(Container, DeviceCgroupV1AllowsOnlyDevNull) {
  const Proc p = sh(kDeviceProbe, {"--device-cgroup", "--cgroup", "v1"});
  EXPECT_EQ(p.out(), "null-ok\nzero-refused\nurandom-refused\nmknod-refused\n") << p.err();
  EXPECT_TRUE(contains(p.err(), "/dev/zero: Operation not permitted")) << p.err();
  EXPECT_TRUE(contains(p.err(), "devices.allow, cgroup v1")) << p.err();
  expect_cgroups_removed(p, 1);
}

TEST_F(Container, DeviceCgroupV2EbpfAllowsOnlyDevNull) {
  if (!fs::exists("/sys/fs/cgroup/cgroup.controllers") &&
      !fs::exists("/sys/fs/cgroup/unified/cgroup.controllers"))
    GTEST_SKIP() << "no cgroup2 hierarchy mounted";
  const Proc p = sh(kDeviceProbe, {"--device-cgroup", "--cgroup", "v2"});
  EXPECT_EQ(p.out(), "null-ok\nzero-refused\nurandom-refused\nmknod-refused\n") << p.err();
  EXPECT_TRUE(contains(p.err(), "eBPF program, cgroup v2")) << p.err();
  expect_cgroups_removed(p, 1);
}

// /dev/full stands in for a GPU node: a char device the host has, passed in
// under another name; writing to it fails with ENOSPC, which proves the
// container reached the real driver behind 1:7.
TEST_F(Container, PassedDeviceIsAllowedWhileOthersAreRefused) {
  for (const char* version : {"v1", "v2"}) {
    const Proc p =
        sh("ls -l /dev/gpu0 | cut -c1-1; echo x > /dev/gpu0; head -c 1 /dev/zero >/dev/null || "
           "echo zero-refused",
           {"--device", "/dev/full:/dev/gpu0", "--device-cgroup", "--cgroup", version});
    EXPECT_EQ(p.out(), "c\nzero-refused\n") << version << ": " << p.err();
    EXPECT_TRUE(contains(p.err(), "write error: No space left on device"))
        << version << ": " << p.err();
    EXPECT_TRUE(contains(p.err(), "devices allowed: c 1:3, c 1:7;")) << p.err();
    expect_cgroups_removed(p, 1);
  }
}

TEST_F(Container, MemoryAndDevicesTogether) {
  const Proc p = sh("head -c 1 /dev/zero >/dev/null || echo zero-refused",
                    {"100", "--device-cgroup"}, "run-limited");
  EXPECT_EQ(p.exit_code, 0) << p.err();
  EXPECT_EQ(p.out(), "zero-refused\n");
  expect_cgroups_removed(p, 2);
}

TEST_F(Container, CgroupsRemovedWhenTheCommandCannotStart) {
  const Proc p = sh("true", {"100", "--device-cgroup"}, "run-limited");  // warm-up: the normal path
  expect_cgroups_removed(p, 2);
  Proc q =
      spawn({"run-limited", "100", "--device-cgroup", "--rootfs", rootfs_, "/no/such/program"});
  EXPECT_EQ(q.wait(), 2);
  EXPECT_TRUE(contains(
      q.err(),
      "mininer: error: cannot run '/no/such/program' in the container: No such file or directory"))
      << q.err();
  expect_cgroups_removed(q, 2);
}

TEST_F(Container, CgroupsRemovedWhenSetupFails) {
  // Refused while parsing: nothing is created.
  Proc q = spawn({"run-limited", "50", "--device-cgroup", "--rootfs", rootfs_, "--device",
                  "/dev/full:/dev/x/../../gpu", "/bin/true"});
  EXPECT_EQ(q.wait(), 2) << q.err();  // refused before anything is created
  EXPECT_TRUE(cgroup_paths(q.err()).empty());
  // A failure inside the child during setup: a file cannot be bind-mounted on
  // the rootfs's /tmp directory. The child dies before exec; the groups go.
  Proc r = spawn({"run-limited", "50", "--device-cgroup", "--rootfs", rootfs_, "--inject",
                  std::string(GPULAB_BIN_DIR) + "/hog:/tmp", "/bin/true"});
  EXPECT_EQ(r.wait(), 1) << r.err();
  EXPECT_TRUE(contains(r.err(), "mininer: error: cannot bind-mount")) << r.err();
  expect_cgroups_removed(r, 2);
}

TEST_F(Container, CgroupsRemovedWhenMininerIsTerminated) {
  Proc p =
      spawn({"run-limited", "100", "--device-cgroup", "--rootfs", rootfs_, "/bin/sleep", "30"});
  ASSERT_TRUE(p.wait_for_err("pid 1 inside")) << p.err();
  const auto paths = cgroup_paths(p.err());
  ASSERT_EQ(paths.size(), 2u) << p.err();
  for (const auto& path : paths) EXPECT_TRUE(fs::exists(path));
  kill(p.pid, SIGTERM);
  EXPECT_EQ(p.wait(), 137) << p.err();
  EXPECT_TRUE(contains(p.err(), "received SIGTERM: the container was killed")) << p.err();
  expect_cgroups_removed(p, 2);
}

TEST_F(Container, DynamicBinaryFailsForWantOfItsLoader) {
  // The dynamically linked mininer, injected into a rootfs without libc: the
  // library-injection lesson in miniature.
  Proc p = spawn({"run", "--rootfs", rootfs_, "--inject",
                  std::string(GPULAB_BIN_DIR) + "/mininer:/usr/bin/dyn", "/usr/bin/dyn", "--help"});
  EXPECT_EQ(p.wait(), 2) << p.err();
  EXPECT_TRUE(contains(p.err(), "dynamic loader, is missing")) << p.err();
  Proc s = spawn({"run", "--rootfs", rootfs_, "--inject",
                  std::string(GPULAB_BIN_DIR) + "/mininer-static", "/usr/bin/mininer", "--help"});
  EXPECT_EQ(s.wait(), 0) << s.err();
  EXPECT_TRUE(contains(s.out(), "run-limited")) << s.out();
}

TEST_F(Container, UserNamespaceMapsRootToAnUnprivilegedUid) {
  const Proc p = sh(
      "id -u; cat /proc/self/uid_map; stat -c %U /bin/busybox; "
      "echo x > /dev/null && echo null-ok; mknod /dev/q c 1 5 2>/dev/null || echo mknod-refused; "
      "echo x > /dev/gpu0 2>/dev/null || echo gpu0-enospc",
      {"--userns", "--device", "/dev/full:/dev/gpu0", "--device-cgroup"});
  EXPECT_EQ(p.exit_code, 0) << p.err();
  std::string out = p.out();
  out = std::regex_replace(out, std::regex(" +"), " ");
  EXPECT_EQ(out, "0\n 0 100000 65536\nnobody\nnull-ok\nmknod-refused\ngpu0-enospc\n") << p.err();
  EXPECT_TRUE(contains(p.err(), "-> /dev/gpu0 (bind mount)")) << p.err();
  expect_cgroups_removed(p, 1);
}

TEST_F(Container, ConfinedRootHasDockersCapabilitiesAndCannotMountOrUnshare) {
  const std::string script =
      "grep -E '^(CapEff|NoNewPrivs|Seccomp):' /proc/self/status; "
      "mount -t tmpfs none /tmp 2>/dev/null || echo mount-refused; "
      "unshare -n true 2>/dev/null || echo unshare-refused; "
      "touch /confined && echo files-ok";
  const Proc confined = sh(script, {"--confine"});
  EXPECT_EQ(confined.exit_code, 0) << confined.err();
  EXPECT_EQ(confined.out(),
            "CapEff:\t00000000a80425fb\nNoNewPrivs:\t1\nSeccomp:\t2\nmount-refused\nunshare-refused\nfiles-ok\n")
      << confined.err();
  // The same script without it: full root, no filter, and the mount works.
  const Proc plain = sh(script);
  EXPECT_EQ(plain.exit_code, 0) << plain.err();
  EXPECT_TRUE(contains(plain.out(), "NoNewPrivs:\t0\nSeccomp:\t0\n")) << plain.out();
  EXPECT_FALSE(contains(plain.out(), "mount-refused")) << plain.out();
}

TEST_F(Container, NetworkNamespacePingsTheHost) {
  if (access("/usr/sbin/ip", X_OK) != 0 && access("/sbin/ip", X_OK) != 0 &&
      access("/bin/ip", X_OK) != 0)
    GTEST_SKIP() << "no ip tool (apt-get install iproute2)";
  Proc p = spawn({"run", "--net", "--rootfs", rootfs_, "/bin/sh", "-c",
                  "ip -4 -o addr show eth0 | grep -o 'inet [0-9./]*'; ping -c 1 -W 5 "
                  "$MININER_HOST_IP | grep received; "
                  "echo ready >&2; sleep 2"});
  ASSERT_TRUE(p.wait_for_err("ready")) << p.err();
  std::smatch m;
  const std::string err = p.err();
  ASSERT_TRUE(std::regex_search(err, m, std::regex(R"(container eth0 ([0-9.]+)/30)"))) << err;
  // Host -> container while it still runs.
  Proc ping = spawn({"ping", "-c", "1", "-W", "5", m[1].str()}, "/bin/busybox");
  EXPECT_EQ(ping.wait(), 0) << ping.out() << ping.err();
  EXPECT_EQ(p.wait(), 0) << p.err();
  EXPECT_TRUE(contains(p.out(), "inet " + m[1].str() + "/30\n")) << p.out();
  EXPECT_TRUE(contains(p.out(), "1 packets transmitted, 1 packets received")) << p.out();
}

}  // namespace

namespace {

// The host pid of the container's init, from "container minibox: pid N on the host".
pid_t container_pid(const std::string& err) {
  std::smatch m;
  if (!std::regex_search(err, m, std::regex(R"(container \S+: pid (\d+) on the host)"))) return -1;
  return static_cast<pid_t>(std::stol(m[1]));
}

// Gone, or a zombie nobody has reaped yet: either way it runs no more.
bool process_ended(pid_t pid) {
  const std::string stat = slurp("/proc/" + std::to_string(pid) + "/stat");
  const auto close = stat.rfind(')');
  return stat.empty() || (close != std::string::npos && close + 2 < stat.size() && stat[close + 2] == 'Z');
}

bool wait_until_ended(pid_t pid, std::chrono::milliseconds deadline = 10s) {
  for (auto t = 0ms; t < deadline; t += 20ms) {
    if (process_ended(pid)) return true;
    std::this_thread::sleep_for(20ms);
  }
  return process_ended(pid);
}

}  // namespace

TEST_F(Container, SigkillOfMininerTakesTheContainerAlongAndGcRemovesItsCgroups) {
  // Before: the container's init kept running after its runtime was killed,
  // and its cgroups stayed until someone found them by hand.
  Proc p = spawn({"run-limited", "100", "--device-cgroup", "--rootfs", rootfs_, "/bin/sleep", "300"});
  ASSERT_TRUE(p.wait_for_err("pid 1 inside")) << p.err();
  const pid_t init = container_pid(p.err());
  ASSERT_GT(init, 0) << p.err();
  const auto paths = cgroup_paths(p.err());
  ASSERT_EQ(paths.size(), 2u) << p.err();
  kill(p.pid, SIGKILL);
  EXPECT_EQ(p.wait(), 128 + SIGKILL);
  EXPECT_TRUE(wait_until_ended(init)) << "container init " << init << " outlived its runtime";
  for (const auto& path : paths) EXPECT_TRUE(fs::exists(path)) << path;  // nobody removed them yet
  // (A run in parallel may remove them first: every run collects stale groups.)
  Proc gc = spawn({"gc"});
  EXPECT_EQ(gc.wait(), 0) << gc.err();
  for (const auto& path : paths) EXPECT_FALSE(fs::exists(path)) << path << " was left behind\n" << gc.out();
}

TEST_F(Container, TheNextRunRemovesTheCgroupsOfAKilledMininer) {
  Proc p = spawn({"run-limited", "100", "--rootfs", rootfs_, "/bin/sleep", "300"});
  ASSERT_TRUE(p.wait_for_err("pid 1 inside")) << p.err();
  const auto paths = cgroup_paths(p.err());
  ASSERT_EQ(paths.size(), 1u) << p.err();
  kill(p.pid, SIGKILL);
  p.wait();
  const Proc next = sh("true", {"100"}, "run-limited");
  EXPECT_EQ(next.exit_code, 0) << next.err();
  EXPECT_FALSE(fs::exists(paths[0])) << paths[0] << " was left behind\n" << next.err();
  expect_cgroups_removed(next, 1);
}
