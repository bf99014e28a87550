#include "fakegpu/wait_bench.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <stdexcept>

#include "fakegpu/client_checks.hpp"

namespace fakegpu {
namespace {

using Clock = std::chrono::steady_clock;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n == 0 ? 0 : n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double ns_since(Clock::time_point t0) {
  return static_cast<double>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t0).count());
}

void expect_ok(int rc, const char* what) {
  if (rc != 0) throw std::runtime_error(std::string(what) + " -> " + errno_name(-rc));
}

}  // namespace

WaitBenchResult run_wait_bench(Device& dev, const std::string& path, std::uint64_t iterations,
                               int fresh_jobs) {
  constexpr int kReps = 5;
  WaitBenchResult r;
  const int fd = dev.open(path);
  if (fd < 0) throw std::runtime_error("open(" + path + ") -> " + errno_name(-fd));
  fakegpu_info info{};
  expect_ok(dev.ioctl(fd, FAKEGPU_IOC_INFO, &info), "INFO");
  fakegpu_alloc a{};
  a.size = 4096;
  expect_ok(dev.ioctl(fd, FAKEGPU_IOC_ALLOC, &a), "ALLOC");
  fakegpu_submit s{};
  s.handle = a.handle;
  expect_ok(dev.ioctl(fd, FAKEGPU_IOC_SUBMIT, &s), "SUBMIT");
  fakegpu_wait w{};
  w.seqno = s.seqno;
  expect_ok(dev.ioctl(fd, FAKEGPU_IOC_WAIT, &w), "WAIT");  // now signalled

  std::vector<double> info_ns, wait_ns;
  for (int rep = 0; rep < kReps; ++rep) {
    auto t0 = Clock::now();
    for (std::uint64_t i = 0; i < iterations; ++i)
      expect_ok(dev.ioctl(fd, FAKEGPU_IOC_INFO, &info), "INFO");
    info_ns.push_back(ns_since(t0) / static_cast<double>(iterations));
    t0 = Clock::now();
    for (std::uint64_t i = 0; i < iterations; ++i)
      expect_ok(dev.ioctl(fd, FAKEGPU_IOC_WAIT, &w), "WAIT");
    wait_ns.push_back(ns_since(t0) / static_cast<double>(iterations));
  }
  r.rows.push_back({"ioctl INFO round trip", iterations * kReps, median(info_ns)});
  r.rows.push_back({"ioctl WAIT, signalled fence", iterations * kReps, median(wait_ns)});

  int err = 0;
  void* page = (info.flags & FAKEGPU_INFO_F_FENCE_MMAP) != 0
                   ? dev.mmap(fd, FAKEGPU_FENCE_PAGE_SIZE, PROT_READ, MAP_SHARED, 0, &err)
                   : nullptr;
  r.has_fence_page = page != nullptr;
  if (page != nullptr) {
    const auto* fence = static_cast<const fakegpu_fence_page*>(page);
    const std::uint64_t polls = iterations * 100;
    std::vector<double> poll_ns;
    std::uint64_t sink = 0;
    for (int rep = 0; rep < kReps; ++rep) {
      const auto t0 = Clock::now();
      for (std::uint64_t i = 0; i < polls; ++i)
        sink += __atomic_load_n(&fence->completed_seq, __ATOMIC_ACQUIRE) >= w.seqno ? 1 : 0;
      poll_ns.push_back(ns_since(t0) / static_cast<double>(polls));
    }
    if (sink != polls * kReps) throw std::runtime_error("the fence page went backwards");
    r.rows.push_back({"mmap poll, signalled fence", polls * kReps, median(poll_ns)});
    r.poll_vs_ioctl =
        r.rows.back().ns_per_call > 0 ? r.rows[1].ns_per_call / r.rows.back().ns_per_call : 0;
  }

  // Fresh jobs: how long after SUBMIT each way of waiting returns (job latency is 10 ms).
  std::vector<double> by_ioctl, by_poll;
  for (int j = 0; j < fresh_jobs; ++j) {
    auto t0 = Clock::now();
    expect_ok(dev.ioctl(fd, FAKEGPU_IOC_SUBMIT, &s), "SUBMIT");
    w.seqno = s.seqno;
    expect_ok(dev.ioctl(fd, FAKEGPU_IOC_WAIT, &w), "WAIT");
    by_ioctl.push_back(ns_since(t0) / 1e6);
    if (page != nullptr) {
      t0 = Clock::now();
      expect_ok(dev.ioctl(fd, FAKEGPU_IOC_SUBMIT, &s), "SUBMIT");
      if (poll_fence(dev, fd, page, s.seqno) < 0)
        throw std::runtime_error("the fence page never reached the job");
      by_poll.push_back(ns_since(t0) / 1e6);
    }
  }
  r.job_wait_ioctl_ms = median(by_ioctl);
  r.job_wait_poll_ms = median(by_poll);
  if (page != nullptr) dev.munmap(page, FAKEGPU_FENCE_PAGE_SIZE);
  w.seqno = s.seqno;
  dev.ioctl(fd, FAKEGPU_IOC_WAIT, &w);
  fakegpu_free f{};
  f.handle = a.handle;
  dev.ioctl(fd, FAKEGPU_IOC_FREE, &f);
  dev.close(fd);
  return r;
}

void print_wait_bench(const WaitBenchResult& r, std::FILE* out) {
  std::fprintf(out, "%-30s %12s %12s %14s\n", "what", "calls", "ns/call", "per second");
  for (const auto& row : r.rows)
    std::fprintf(out, "%-30s %12llu %12.1f %14.0f\n", row.what.c_str(),
                 static_cast<unsigned long long>(row.calls), row.ns_per_call, row.per_second());
  if (r.has_fence_page)
    std::fprintf(out, "waits/s, mmap poll vs ioctl WAIT: %.0fx\n", r.poll_vs_ioctl);
  else
    std::fprintf(out, "waits/s, mmap poll vs ioctl WAIT: no fence page on this device\n");
  std::fprintf(out, "fresh 10 ms job, SUBMIT until done: ioctl WAIT %.2f ms", r.job_wait_ioctl_ms);
  if (r.has_fence_page) std::fprintf(out, ", mmap poll %.2f ms", r.job_wait_poll_ms);
  std::fprintf(out, " (median)\n");
}

}  // namespace fakegpu
