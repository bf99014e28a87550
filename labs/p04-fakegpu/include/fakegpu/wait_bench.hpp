// The fence two ways (curriculum extension 3): how many waits per second a client
// gets from ioctl(WAIT) on a signalled fence versus an acquire load of the
// mmap'd fence page, plus the ioctl round trip (INFO) and the wake-up latency
// of waiting for a fresh 10 ms job each way. Run on the module (in the VM) and
// on fakegpud (no fence page: the poll rows are absent).
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "fakegpu/device.hpp"

namespace fakegpu {

struct BenchRow {
  std::string what;
  std::uint64_t calls = 0;
  double ns_per_call = 0;  // median of the repetitions
  double per_second() const { return ns_per_call > 0 ? 1e9 / ns_per_call : 0; }
};

struct WaitBenchResult {
  std::vector<BenchRow> rows;
  bool has_fence_page = false;
  double poll_vs_ioctl = 0;      // ioctl WAIT ns / poll ns, both on a signalled fence
  double job_wait_ioctl_ms = 0;  // SUBMIT -> WAIT returns, fresh 10 ms job (median)
  double job_wait_poll_ms = 0;   // SUBMIT -> page shows it done (median)
};

// `iterations` ioctls per repetition (polls: 100x as many); 5 repetitions.
// Throws std::runtime_error when the device cannot be opened or misbehaves.
WaitBenchResult run_wait_bench(Device& dev, const std::string& path, std::uint64_t iterations,
                               int fresh_jobs);
void print_wait_bench(const WaitBenchResult& r, std::FILE* out);

}  // namespace fakegpu
