// What gpulab-ioctl-latency reports once it has read the BPF maps: per device file and
// request code, the call count, the errors and a log2 latency histogram (ebpf/ioctl_latency.h
// has the bucket layout). Rendered as the table, the JSON document and Prometheus text for
// gpu-exporter's --textfile-dir. Kept apart from the loader so that it is tested without root.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "exporter/ioctl_target.hpp"
#include "gpulab/json.hpp"
#include "gpulab/prom_text.hpp"

namespace exporter {

inline constexpr std::size_t kIoctlSlots = 40;  // IOCTL_LATENCY_SLOTS (asserted in the .cpp)

// One (device file, request code) pair as the BPF program counted it.
struct IoctlSeries {
  std::size_t target = 0;  // index into the targets
  std::uint32_t request = 0;
  std::uint64_t count = 0;  // the slots' sum
  std::uint64_t errors = 0;
  std::uint64_t sum_ns = 0;
  std::array<std::uint64_t, kIoctlSlots> slots{};  // slot k: [2^k, 2^(k+1)) ns
};

struct IoctlReport {
  std::vector<IoctlTarget> targets;
  std::vector<IoctlSeries> series;     // sorted by target, then request
  std::uint64_t dropped_inflight = 0;  // calls not timed: the in-flight map was full
  std::uint64_t dropped_keys = 0;      // calls not kept: the histogram map was full
  double seconds = 0;                  // how long the probe was attached
};

// The request code as the _IOC macros spell it: "_IOWR('F', 1, 16)", "_IO(0x00, 5)".
[[nodiscard]] std::string describe_ioctl_request(std::uint32_t request);

// Exclusive upper bound of slot k in ns (2^(k+1)); the last slot has none (UINT64_MAX).
[[nodiscard]] std::uint64_t ioctl_slot_upper_ns(std::size_t slot);

// The upper bound (ns) of the bucket holding the q-quantile call (rank ceil(q * count)): the
// true latency is below it and at least half of it. 0 when the series is empty; UINT64_MAX
// when that call is in the open last slot.
[[nodiscard]] std::uint64_t ioctl_quantile_upper_ns(const IoctlSeries& s, double q);

// By target, then request code: the order of the table, the JSON and the metrics.
void sort_series(IoctlReport& report);

// The human table (one row per device and request) and the line that says p50/p99/max are
// bucket bounds.
[[nodiscard]] std::string ioctl_latency_table(const IoctlReport& report);
[[nodiscard]] gpulab::Json ioctl_latency_json(const IoctlReport& report);

// Adds device_ioctl_latency_seconds (histogram), device_ioctl_errors_total and
// device_ioctl_dropped_total to `out`. The buckets exported are the log2 bounds from 2^10 ns
// (1 us) to 2^34 ns (17 s): finer ones fold into the first, coarser ones into +Inf.
void add_ioctl_latency_metrics(gpulab::prom::Exposition& out, const IoctlReport& report);

}  // namespace exporter
