#include "exporter/ioctl_latency.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>

#include "gpulab/table.hpp"
#include "ioctl_latency.h"

namespace exporter {

static_assert(kIoctlSlots == IOCTL_LATENCY_SLOTS, "the BPF program's histogram has another size");
static_assert(sizeof(ioctl_hist::slots) == kIoctlSlots * sizeof(std::uint64_t));

namespace {

constexpr std::size_t kFirstExportedSlot = 9;  // upper bound 2^10 ns
constexpr std::size_t kLastExportedSlot = 33;  // upper bound 2^34 ns
constexpr std::uint64_t kNone = std::numeric_limits<std::uint64_t>::max();

// "12.3" us for a bound, "inf" for the open last slot, "-" for an empty series.
std::string bound_us(std::uint64_t ns) {
  if (ns == 0) return "-";
  if (ns == kNone) return "inf";
  return fmt::format("{:.1f}", static_cast<double>(ns) / 1e3);
}

std::string request_hex(std::uint32_t request) {
  return fmt::format("{:#010x}", request);
}

}  // namespace

std::string describe_ioctl_request(std::uint32_t request) {
  // asm-generic/ioctl.h: nr 8 bits, type 8, size 14, dir 2 (x86, arm64; not ppc, mips).
  const unsigned nr = request & 0xff;
  const unsigned type = (request >> 8) & 0xff;
  const unsigned size = (request >> 16) & 0x3fff;
  const unsigned dir = request >> 30;
  const std::string t = std::isprint(static_cast<int>(type)) != 0 && type != '\'' && type != '\\'
                            ? fmt::format("'{}'", static_cast<char>(type))
                            : fmt::format("{:#04x}", type);
  static constexpr const char* kMacro[] = {"_IO", "_IOW", "_IOR", "_IOWR"};
  if (dir == 0 && size == 0) return fmt::format("_IO({}, {})", t, nr);
  return fmt::format("{}({}, {}, {})", kMacro[dir], t, nr, size);
}

std::uint64_t ioctl_slot_upper_ns(std::size_t slot) {
  if (slot + 1 >= kIoctlSlots) return kNone;
  return std::uint64_t{1} << (slot + 1);
}

std::uint64_t ioctl_quantile_upper_ns(const IoctlSeries& s, double q) {
  if (s.count == 0) return 0;
  const auto rank = std::max<std::uint64_t>(
      1, static_cast<std::uint64_t>(std::ceil(q * static_cast<double>(s.count))));
  std::uint64_t seen = 0;
  for (std::size_t k = 0; k < kIoctlSlots; ++k) {
    seen += s.slots[k];
    if (seen >= rank) return ioctl_slot_upper_ns(k);
  }
  return kNone;
}

void sort_series(IoctlReport& report) {
  std::sort(report.series.begin(), report.series.end(), [](const auto& a, const auto& b) {
    return a.target != b.target ? a.target < b.target : a.request < b.request;
  });
}

std::string ioctl_latency_table(const IoctlReport& report) {
  gpulab::Table t;
  t.column("device", gpulab::Table::Align::kLeft)
      .column("request", gpulab::Table::Align::kLeft)
      .column("ioc", gpulab::Table::Align::kLeft)
      .column("calls")
      .column("errors")
      .column("mean_us")
      .column("p50_le_us")
      .column("p99_le_us")
      .column("max_le_us");
  for (const auto& s : report.series) {
    t.row(
        {report.targets[s.target].path, request_hex(s.request), describe_ioctl_request(s.request),
         fmt::format("{}", s.count), fmt::format("{}", s.errors),
         fmt::format("{:.1f}", static_cast<double>(s.sum_ns) / 1e3 / static_cast<double>(s.count)),
         bound_us(ioctl_quantile_upper_ns(s, 0.50)), bound_us(ioctl_quantile_upper_ns(s, 0.99)),
         bound_us(ioctl_quantile_upper_ns(s, 1.0))});
  }
  std::string out;
  if (report.series.empty()) {
    out = fmt::format("no ioctl on {} in {:.1f} s\n",
                      report.targets.size() == 1
                          ? report.targets[0].path
                          : fmt::format("{} device files", report.targets.size()),
                      report.seconds);
  } else {
    out = t.render();
    out +=
        "p50/p99/max: upper bounds of log2 buckets (the true value is below, and at least half)\n";
  }
  if (report.dropped_inflight + report.dropped_keys > 0) {
    out += fmt::format(
        "dropped: {} calls not timed (in-flight map full), {} not kept (histogram "
        "map full)\n",
        report.dropped_inflight, report.dropped_keys);
  }
  return out;
}

gpulab::Json ioctl_latency_json(const IoctlReport& report) {
  gpulab::Json doc;
  doc["seconds"] = report.seconds;
  auto& devices = doc["devices"] = gpulab::Json::array();
  for (const auto& t : report.targets) {
    devices.push_back({{"path", t.path}, {"kind", t.chrdev ? "chrdev" : "file"}});
  }
  auto& series = doc["series"] = gpulab::Json::array();
  for (const auto& s : report.series) {
    gpulab::Json buckets = gpulab::Json::array();
    for (std::size_t k = 0; k < kIoctlSlots; ++k) {
      if (s.slots[k] == 0) continue;
      const std::uint64_t hi = ioctl_slot_upper_ns(k);
      buckets.push_back({{"lt_ns", hi == kNone ? gpulab::Json("+Inf") : gpulab::Json(hi)},
                         {"count", s.slots[k]}});
    }
    const auto q = [&](double p) {
      const std::uint64_t ns = ioctl_quantile_upper_ns(s, p);
      return ns == kNone ? gpulab::Json("+Inf") : gpulab::Json(ns);
    };
    series.push_back({{"device", report.targets[s.target].path},
                      {"request", request_hex(s.request)},
                      {"ioc", describe_ioctl_request(s.request)},
                      {"calls", s.count},
                      {"errors", s.errors},
                      {"sum_ns", s.sum_ns},
                      {"p50_lt_ns", q(0.50)},
                      {"p99_lt_ns", q(0.99)},
                      {"max_lt_ns", q(1.0)},
                      {"buckets", std::move(buckets)}});
  }
  doc["dropped"] = {{"inflight_full", report.dropped_inflight}, {"keys_full", report.dropped_keys}};
  return doc;
}

void add_ioctl_latency_metrics(gpulab::prom::Exposition& out, const IoctlReport& report) {
  std::vector<double> bounds;
  for (std::size_t k = kFirstExportedSlot; k <= kLastExportedSlot; ++k)
    bounds.push_back(static_cast<double>(ioctl_slot_upper_ns(k)) / 1e9);
  auto& hist = out.histogram("device_ioctl_latency_seconds",
                             "Time from ioctl entry to return per device file and request code "
                             "(eBPF, syscalls tracepoints; log2 buckets).",
                             bounds);
  auto& errors = out.counter("device_ioctl_errors_total",
                             "ioctl calls on the device file that returned an error.");
  for (const auto& s : report.series) {
    const gpulab::prom::Labels labels{{"device", report.targets[s.target].path},
                                      {"request", request_hex(s.request)}};
    // Slot k is below 2^(k+1) ns, so it belongs to every bound from 2^(k+1) on.
    std::vector<double> cumulative;
    std::uint64_t seen = 0;
    std::size_t k = 0;
    for (std::size_t b = kFirstExportedSlot; b <= kLastExportedSlot; ++b) {
      for (; k <= b; ++k) seen += s.slots[k];
      cumulative.push_back(static_cast<double>(seen));
    }
    cumulative.push_back(static_cast<double>(s.count));
    hist.set_histogram(labels, std::move(cumulative), static_cast<double>(s.sum_ns) / 1e9);
    errors.set(labels, static_cast<double>(s.errors));
  }
  auto& dropped = out.counter("device_ioctl_dropped_total",
                              "ioctl calls on watched device files the probe could not count.");
  dropped.set({{"reason", "inflight_full"}}, static_cast<double>(report.dropped_inflight));
  dropped.set({{"reason", "keys_full"}}, static_cast<double>(report.dropped_keys));
}

}  // namespace exporter
