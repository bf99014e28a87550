// The cost of one fakegpu ioctl: in-process (the core alone) and through FUSE
// (client -> kernel FUSE driver -> fakegpud -> back). The module's numbers come
// from the VM: `ctest -L vm` prints fakegpu-bench's table from inside qemu.
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>

#include "fakegpu/core_device.hpp"
#include "fakegpu_ioctl.h"

namespace {

// One fakegpud for the whole run, started on first use and stopped at exit.
class Daemon {
 public:
  static Daemon& get() {
    static Daemon d;
    return d;
  }
  const std::string& device() const { return device_; }
  const std::string& why_not() const { return why_not_; }
  ~Daemon() {
    if (pid_ > 0) {
      kill(pid_, SIGTERM);
      waitpid(pid_, nullptr, 0);
      rmdir(dir_.c_str());
    }
  }

 private:
  Daemon() {
#ifndef FAKEGPUD_PATH
    why_not_ = "SKIPPED: built without fakegpud (libfuse3 missing)";
#else
    if (access("/dev/fuse", R_OK | W_OK) != 0) {
      why_not_ = "SKIPPED: /dev/fuse is not available";
      return;
    }
    char tmpl[] = "/tmp/fakegpu-bench-XXXXXX";
    if (mkdtemp(tmpl) == nullptr) {
      why_not_ = "mkdtemp failed";
      return;
    }
    dir_ = tmpl;
    pid_ = fork();
    if (pid_ == 0) {
      const int null = ::open("/dev/null", O_WRONLY);
      dup2(null, 1);
      dup2(null, 2);
      execl(FAKEGPUD_PATH, "fakegpud", "--foreground", dir_.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    for (int i = 0; i < 500; ++i) {
      std::ifstream m("/proc/self/mounts");
      const std::string mounts((std::istreambuf_iterator<char>(m)), {});
      if (mounts.find(" " + dir_ + " ") != std::string::npos) {
        device_ = dir_ + "/fakegpu";
        return;
      }
      if (waitpid(pid_, nullptr, WNOHANG) == pid_) {
        pid_ = -1;
        why_not_ = "SKIPPED: fakegpud could not mount (not root?)";
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    why_not_ = "fakegpud did not mount within 5 s";
#endif
  }
  std::string dir_, device_, why_not_;
  pid_t pid_ = -1;
};

int open_fuse(benchmark::State& state) {
  const Daemon& d = Daemon::get();
  if (d.device().empty()) {
    state.SkipWithError(d.why_not().c_str());
    return -1;
  }
  const int fd = ::open(d.device().c_str(), O_RDWR);
  if (fd < 0) state.SkipWithError("open of the FUSE device failed");
  return fd;
}

void BM_Core_Info(benchmark::State& state) {
  fakegpu::CoreDevice dev(fakegpu::default_config());
  const auto ctx = dev.open();
  fakegpu_info info{};
  for (auto _ : state) benchmark::DoNotOptimize(dev.ioctl(ctx, FAKEGPU_IOC_INFO, &info));
}
BENCHMARK(BM_Core_Info);

void BM_Core_AllocFree(benchmark::State& state) {
  fakegpu::CoreDevice dev(fakegpu::default_config());
  const auto ctx = dev.open();
  for (auto _ : state) {
    fakegpu_alloc a{};
    a.size = 4096;
    dev.ioctl(ctx, FAKEGPU_IOC_ALLOC, &a);
    fakegpu_free f{};
    f.handle = a.handle;
    benchmark::DoNotOptimize(dev.ioctl(ctx, FAKEGPU_IOC_FREE, &f));
  }
}
BENCHMARK(BM_Core_AllocFree);

void BM_Fuse_Info(benchmark::State& state) {
  const int fd = open_fuse(state);
  if (fd < 0) return;
  fakegpu_info info{};
  for (auto _ : state)
    if (::ioctl(fd, FAKEGPU_IOC_INFO, &info) != 0) state.SkipWithError("INFO failed");
  close(fd);
}
BENCHMARK(BM_Fuse_Info)->UseRealTime();

void BM_Fuse_WaitSignalled(benchmark::State& state) {
  const int fd = open_fuse(state);
  if (fd < 0) return;
  fakegpu_alloc a{};
  a.size = 4096;
  fakegpu_submit s{};
  if (::ioctl(fd, FAKEGPU_IOC_ALLOC, &a) != 0 ||
      (s.handle = a.handle, ::ioctl(fd, FAKEGPU_IOC_SUBMIT, &s)) != 0) {
    state.SkipWithError("ALLOC/SUBMIT failed");
    close(fd);
    return;
  }
  fakegpu_wait w{};
  w.seqno = s.seqno;
  for (auto _ : state)
    if (::ioctl(fd, FAKEGPU_IOC_WAIT, &w) != 0) state.SkipWithError("WAIT failed");
  close(fd);
}
BENCHMARK(BM_Fuse_WaitSignalled)->UseRealTime();

void BM_Fuse_AllocFree(benchmark::State& state) {
  const int fd = open_fuse(state);
  if (fd < 0) return;
  for (auto _ : state) {
    fakegpu_alloc a{};
    a.size = 4096;
    fakegpu_free f{};
    if (::ioctl(fd, FAKEGPU_IOC_ALLOC, &a) != 0 ||
        (f.handle = a.handle, ::ioctl(fd, FAKEGPU_IOC_FREE, &f)) != 0)
      state.SkipWithError("ALLOC/FREE failed");
  }
  close(fd);
}
BENCHMARK(BM_Fuse_AllocFree)->UseRealTime();

void BM_Fuse_OpenClose(benchmark::State& state) {
  const int probe = open_fuse(state);
  if (probe < 0) return;
  close(probe);
  const std::string path = Daemon::get().device();
  for (auto _ : state) {
    const int fd = ::open(path.c_str(), O_RDWR);
    if (fd < 0) state.SkipWithError("open failed");
    close(fd);
  }
}
BENCHMARK(BM_Fuse_OpenClose)->UseRealTime();

}  // namespace
