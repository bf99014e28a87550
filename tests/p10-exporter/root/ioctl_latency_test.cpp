// gpulab-ioctl-latency against real traffic: fakegpud (P04) serves its device through FUSE, the
// probe watches that file, this test sends a known number of ioctls of each request code (and
// some on another file, which must not count), and the probe's counts must equal what was sent:
// in its JSON, in its Prometheus file, and through gpu-exporter --textfile-dir.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <string>
#include <thread>

#include "../exporter_process.hpp"
#include "fakegpu_ioctl.h"
#include "gpulab/json.hpp"
#include "gpulab/prom_text.hpp"
#include "gpulab_test/fakegpud_process.hpp"
#include "gpulab_test/program_run.hpp"

namespace {

using gpulab_test::FakegpudProcess;
using gpulab_test::read_whole_file;

const std::string kBin = GPULAB_BIN_DIR;
constexpr unsigned kUnknownRequest = _IO(FAKEGPU_IOC_MAGIC, 99);  // ENOTTY from the device

bool executable(const std::string& path) {
  return access(path.c_str(), X_OK) == 0;
}

// The probe as a child process: stdout (the JSON report) and stderr to files.
class ProbeProcess {
 public:
  void start(const std::string& args, const std::string& out, const std::string& err) {
    process_.start([&] {
      const std::string cmd =
          "exec " + kBin + "/gpulab-ioctl-latency " + args + " >'" + out + "' 2>'" + err + "'";
      execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
    });
  }

  // Waits (generous deadline: loading a BPF program on a loaded machine) until `ready` exists or
  // the probe exits; returns its exit code if it exited, -1 if it is running with `ready` there.
  int wait_ready(const std::string& ready) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
    while (std::chrono::steady_clock::now() < deadline) {
      if (const auto code = process_.poll()) return *code;
      if (access(ready.c_str(), F_OK) == 0) return -1;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return -2;
  }

  // SIGTERM, then its exit code (-1 when not running or killed).
  int stop() { return process_.stop(); }

 private:
  gpulab_test::ChildProcess process_;
};

class IoctlLatencyProbe : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* p : {"gpulab-ioctl-latency", "fakegpud", "gpu-exporter"}) {
      if (!executable(kBin + "/" + p))
        GTEST_SKIP() << kBin << "/" << p
                     << " is not built (the configure summary says why: gpulab-ioctl-latency needs "
                        "clang, bpftool, libbpf-dev and kernel BTF; fakegpud is labs/p04-fakegpu "
                        "with libfuse3-dev)";
    }
    if (access("/sys/kernel/btf/vmlinux", R_OK) != 0)
      GTEST_SKIP() << "the kernel exposes no BTF (/sys/kernel/btf/vmlinux)";
    if (access("/dev/fuse", R_OK | W_OK) != 0) GTEST_SKIP() << "/dev/fuse is not available";
    char tmpl[] = "/tmp/ioctl-latency-test-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    scratch_ = tmpl;
    mount_ = scratch_ + "/mnt";
    std::filesystem::create_directories(mount_);
    std::filesystem::create_directories(scratch_ + "/textfiles");
    gpulab_test::start_fakegpud_for_test(daemon_, mount_, scratch_ + "/fakegpud.log");
    if (IsSkipped() || HasFatalFailure()) return;
    device_ = mount_ + "/fakegpu";
  }

  void TearDown() override {
    probe_.stop();
    daemon_.stop();
    if (!mount_.empty() && gpulab_test::is_mounted(mount_)) umount2(mount_.c_str(), MNT_DETACH);
    if (!scratch_.empty()) std::filesystem::remove_all(scratch_);
  }

  std::string scratch_, mount_, device_;
  FakegpudProcess daemon_;
  ProbeProcess probe_;
};

// Sends `n` calls of `request` on `fd` with `arg`; returns how many returned -1.
int send(int fd, unsigned long request, void* arg, int n) {
  int failed = 0;
  for (int i = 0; i < n; ++i) failed += ::ioctl(fd, request, arg) != 0;
  return failed;
}

TEST_F(IoctlLatencyProbe, CountsEveryRequestSentToTheWatchedDeviceAndNothingElse) {
  const std::string ready = scratch_ + "/ready";
  const std::string prom = scratch_ + "/textfiles/ioctl.prom";
  probe_.start("--device " + device_ + " --json --metrics-out " + prom + " --interval 0.1" +
                   " --ready-file " + ready,
               scratch_ + "/out.json", scratch_ + "/err.txt");
  const int early = probe_.wait_ready(ready);
  if (early == 77) GTEST_SKIP() << read_whole_file(scratch_ + "/err.txt");
  ASSERT_EQ(early, -1) << "the probe exited " << early
                       << " before attaching: " << read_whole_file(scratch_ + "/err.txt");

  const int fd = ::open(device_.c_str(), O_RDWR);
  ASSERT_GE(fd, 0);
  // Another FUSE file and a character device nobody watches: their ioctls must not count.
  const int other = ::open((mount_ + "/stats").c_str(), O_RDONLY);
  ASSERT_GE(other, 0);
  const int null = ::open("/dev/null", O_RDWR);
  ASSERT_GE(null, 0);

  constexpr int kInfo = 7, kAlloc = 5, kSubmit = 3, kWait = 3, kFree = 5, kUnknown = 4;
  fakegpu_info info{};
  ASSERT_EQ(send(fd, FAKEGPU_IOC_INFO, &info, kInfo), 0);
  unsigned handles[kAlloc] = {};
  for (unsigned& h : handles) {
    fakegpu_alloc a{};
    a.size = 1 << 20;
    ASSERT_EQ(::ioctl(fd, FAKEGPU_IOC_ALLOC, &a), 0);
    h = a.handle;
  }
  std::uint64_t last_seq = 0;
  for (int i = 0; i < kSubmit; ++i) {
    fakegpu_submit s{};
    s.handle = handles[0];
    ASSERT_EQ(::ioctl(fd, FAKEGPU_IOC_SUBMIT, &s), 0);
    last_seq = s.seqno;
  }
  for (int i = 0; i < kWait; ++i) {  // the first waits for the jobs (10 ms each), the rest return
    fakegpu_wait w{};
    w.seqno = last_seq;
    ASSERT_EQ(::ioctl(fd, FAKEGPU_IOC_WAIT, &w), 0);
  }
  for (unsigned h : handles) {
    fakegpu_free f{};
    f.handle = h;
    ASSERT_EQ(::ioctl(fd, FAKEGPU_IOC_FREE, &f), 0);
  }
  EXPECT_EQ(send(fd, kUnknownRequest, nullptr, kUnknown), kUnknown);
  send(other, FAKEGPU_IOC_INFO, &info, 9);
  send(null, FAKEGPU_IOC_INFO, &info, 9);
  ::close(null);
  ::close(other);
  ::close(fd);

  // While it runs, --interval rewrites the file: it reaches the 5 ALLOCs without a restart.
  const std::string want_alloc =
      "device_ioctl_latency_seconds_count{device=\"" + device_ + "\",request=\"0xc0104601\"} 5\n";
  std::string live;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < deadline) {
    live = read_whole_file(prom);
    if (live.find(want_alloc) != std::string::npos) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_NE(live.find(want_alloc), std::string::npos) << live;

  ASSERT_EQ(probe_.stop(), 0) << read_whole_file(scratch_ + "/err.txt");
  const std::string out = read_whole_file(scratch_ + "/out.json");
  const auto doc = gpulab::Json::parse(out, nullptr, false);
  ASSERT_FALSE(doc.is_discarded()) << out;

  struct Want {
    std::uint64_t calls, errors;
  };
  const std::map<std::string, Want> want = {
      {"0x80604600", {kInfo, 0}}, {"0xc0104601", {kAlloc, 0}},
      {"0x40084602", {kFree, 0}}, {"0xc0104603", {kSubmit, 0}},
      {"0x40104604", {kWait, 0}}, {"0x00004663", {kUnknown, kUnknown}},
  };
  std::map<std::string, Want> got;
  for (const auto& s : doc.at("series")) {
    EXPECT_EQ(s.at("device").get<std::string>(), device_) << s.dump();
    got[s.at("request").get<std::string>()] = {s.at("calls").get<std::uint64_t>(),
                                               s.at("errors").get<std::uint64_t>()};
  }
  ASSERT_EQ(got.size(), want.size()) << out;
  for (const auto& [request, w] : want) {
    ASSERT_TRUE(got.count(request)) << request << " missing: " << out;
    EXPECT_EQ(got[request].calls, w.calls) << request;
    EXPECT_EQ(got[request].errors, w.errors) << request;
  }
  EXPECT_EQ(doc.at("dropped").at("inflight_full").get<std::uint64_t>(), 0u);
  // WAIT's first call blocks until the jobs finish (FAKEGPU_JOB_LATENCY_NS after SUBMIT):
  // its histogram must reach the 8.4-16.8 ms bucket or beyond, whatever the machine.
  for (const auto& s : doc.at("series")) {
    if (s.at("request") != "0x40104604") continue;
    bool slow = false;
    for (const auto& b : s.at("buckets"))
      slow |= b.at("lt_ns").is_string() || b.at("lt_ns").get<std::uint64_t>() > (1u << 23);
    EXPECT_TRUE(slow) << s.dump();
  }

  // The same counts in the Prometheus file, and through gpu-exporter's textfile source.
  const auto parsed = gpulab::prom::parse(read_whole_file(prom));
  ASSERT_TRUE(parsed) << parsed.error().message;
  const auto* hist = parsed.value().find("device_ioctl_latency_seconds");
  ASSERT_NE(hist, nullptr);
  for (const auto& [request, w] : want) {
    const auto* series = hist->find({{"device", device_}, {"request", request}});
    ASSERT_NE(series, nullptr) << request;
    EXPECT_EQ(series->cumulative.back(), static_cast<double>(w.calls)) << request;
  }
  // Prometheus' own linter (names, units, histogram shape), where it is installed.
  if (const std::string pt = p10test::find_program("promtool"); !pt.empty()) {
    const auto lint = p10test::promtool_check_metrics(pt, read_whole_file(prom));
    EXPECT_EQ(lint.rc, 0) << lint.out;
    EXPECT_EQ(lint.out, "");
  }
  const auto exported = gpulab_test::run_program(
      "gpu-exporter", "--once --simulate 1 --textfile-dir " + scratch_ + "/textfiles");
  ASSERT_EQ(exported.exit_code, 0) << exported.err;
  EXPECT_NE(exported.out.find("device_ioctl_latency_seconds_count{device=\"" + device_ +
                              "\",request=\"0xc0104601\"} 5\n"),
            std::string::npos)
      << exported.out;
  EXPECT_NE(exported.out.find("device_ioctl_errors_total{device=\"" + device_ +
                              "\",request=\"0x00004663\"} 4\n"),
            std::string::npos)
      << exported.out;
}

TEST_F(IoctlLatencyProbe, ARunWithNoTrafficSaysSoAndExitsZero) {
  const auto r =
      gpulab_test::run_program("gpulab-ioctl-latency", "--device " + device_ + " --duration 0.2");
  if (r.exit_code == 77) GTEST_SKIP() << r.err;
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("no ioctl on " + device_ + " in ", 0), 0u) << r.out;
  EXPECT_EQ(r.err, "");
}

// A character device is matched by its device number (BPF reads the inode's i_rdev): a
// pseudo-terminal that only this test holds (so the counts are exact) is watched as /dev/pts/N;
// its master (/dev/ptmx, another device) does not count. (A second node for the same number would
// show "any node counts", but a Unix98 pty opens only through devpts: the kernel refuses a slave
// node made with mknod elsewhere.)
TEST(IoctlLatencyCharDevice, CountsAPseudoTerminalByItsDeviceNumber) {
  if (!executable(kBin + "/gpulab-ioctl-latency"))
    GTEST_SKIP() << kBin << "/gpulab-ioctl-latency is not built (the configure summary says why)";
  char tmpl[] = "/tmp/ioctl-latency-pty-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const std::string scratch = tmpl;
  struct Cleanup {
    std::string dir;
    ~Cleanup() { std::filesystem::remove_all(dir); }
  } cleanup{scratch};

  const int master = posix_openpt(O_RDWR | O_NOCTTY);
  ASSERT_GE(master, 0);
  ASSERT_EQ(grantpt(master), 0);
  ASSERT_EQ(unlockpt(master), 0);
  const std::string slave_path = ptsname(master);
  const int slave = ::open(slave_path.c_str(), O_RDWR | O_NOCTTY);
  ASSERT_GE(slave, 0);

  ProbeProcess probe;
  const std::string ready = scratch + "/ready";
  probe.start("--device " + slave_path + " --json --ready-file " + ready, scratch + "/out.json",
              scratch + "/err.txt");
  const int early = probe.wait_ready(ready);
  if (early == 77) GTEST_SKIP() << read_whole_file(scratch + "/err.txt");
  ASSERT_EQ(early, -1) << "the probe exited " << early
                       << " before attaching: " << read_whole_file(scratch + "/err.txt");

  termios t{};
  winsize w{};
  EXPECT_EQ(send(slave, TCGETS, &t, 6), 0);
  EXPECT_EQ(send(slave, TIOCGWINSZ, &w, 4), 0);
  EXPECT_EQ(send(master, TCGETS, &t, 3), 0);
  ::close(slave);
  ::close(master);
  ASSERT_EQ(probe.stop(), 0) << read_whole_file(scratch + "/err.txt");

  const std::string out = read_whole_file(scratch + "/out.json");
  const auto doc = gpulab::Json::parse(out, nullptr, false);
  ASSERT_FALSE(doc.is_discarded()) << out;
  std::map<std::string, std::uint64_t> got;
  for (const auto& s : doc.at("series")) {
    EXPECT_EQ(s.at("device").get<std::string>(), slave_path);
    got[s.at("request").get<std::string>()] = s.at("calls").get<std::uint64_t>();
  }
  const std::map<std::string, std::uint64_t> want = {{"0x00005401", 6}, {"0x00005413", 4}};
  EXPECT_EQ(got, want) << out;
}

}  // namespace
