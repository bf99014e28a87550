#include "ioctl_latency_probe.hpp"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <fmt/format.h>
#include <sys/mount.h>
#include <unistd.h>

#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <numeric>
#include <string>
#include <system_error>

#include "gpulab/errors.hpp"
#include "ioctl_latency.h"
#include "ioctl_latency.skel.h"

namespace exporter {

namespace {

constexpr const char* kBtf = "/sys/kernel/btf/vmlinux";
constexpr const char* kTracefs = "/sys/kernel/tracing";
constexpr const char* kEnterEvent = "events/syscalls/sys_enter_ioctl";

// libbpf's last warning, for the error message; its info and debug chatter is dropped.
std::string& last_libbpf_warning() {
  static std::string text;
  return text;
}

int keep_warnings(enum libbpf_print_level level, const char* format, va_list args) {
  if (level != LIBBPF_WARN) return 0;
  char line[512];
  std::vsnprintf(line, sizeof line, format, args);
  std::string s = line;
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  if (!s.empty()) last_libbpf_warning() = s;
  return 0;
}

[[noreturn]] void fail(const std::string& what, int err) {
  std::string msg = fmt::format("{}: {}", what, std::strerror(err < 0 ? -err : err));
  if (!last_libbpf_warning().empty()) msg += fmt::format(" (libbpf: {})", last_libbpf_warning());
  throw gpulab::RunError(msg);
}

bool exists(const std::string& path) {
  std::error_code ec;
  return std::filesystem::exists(path, ec);
}

}  // namespace

void check_ioctl_probe_prerequisites() {
  if (geteuid() != 0)
    throw gpulab::Unsupported("needs root to load a BPF program (CAP_BPF and CAP_PERFMON)");
  if (!exists(kBtf)) {
    throw gpulab::Unsupported(fmt::format(
        "the kernel exposes no BTF ({} is missing; CO-RE needs CONFIG_DEBUG_INFO_BTF=y)", kBtf));
  }
  const std::string tracefs = kTracefs;
  const bool mounted = exists(tracefs + "/events") || exists("/sys/kernel/debug/tracing/events");
  if (!mounted && ::mount("nodev", kTracefs, "tracefs", 0, nullptr) != 0) {
    throw gpulab::Unsupported(fmt::format(
        "tracefs is not mounted and mounting it on {} failed ({}): mount -t tracefs nodev {}",
        kTracefs, std::strerror(errno), kTracefs));
  }
  if (!exists(tracefs + "/" + kEnterEvent) &&
      !exists(std::string("/sys/kernel/debug/tracing/") + kEnterEvent)) {
    throw gpulab::Unsupported(
        "the kernel has no syscalls:sys_enter_ioctl tracepoint (CONFIG_FTRACE_SYSCALLS)");
  }
}

IoctlLatencyProbe::IoctlLatencyProbe(std::vector<IoctlTarget> targets)
    : targets_(std::move(targets)) {
  libbpf_set_print(keep_warnings);
  last_libbpf_warning().clear();
  skel_ = ioctl_latency_bpf__open();
  if (skel_ == nullptr) fail("cannot open the BPF object", errno);
  if (const int err = ioctl_latency_bpf__load(skel_); err != 0) {
    ioctl_latency_bpf__destroy(skel_);
    skel_ = nullptr;
    // EPERM is the machine, not the program: root without CAP_BPF (a container), or kernel
    // lockdown (secure boot) refusing bpf_probe_read_kernel.
    if (err == -EPERM) {
      throw gpulab::Unsupported(
          "the kernel refused to load the BPF program (Operation not permitted: no CAP_BPF "
          "and CAP_PERFMON here, or kernel lockdown)");
    }
    fail("cannot load the BPF program", err);
  }
  const int map = bpf_map__fd(skel_->maps.targets);
  for (std::uint32_t i = 0; i < targets_.size(); ++i) {
    const ioctl_target_key key{targets_[i].dev, targets_[i].ino};
    if (bpf_map_update_elem(map, &key, &i, BPF_ANY) != 0) {
      const int err = errno;
      ioctl_latency_bpf__destroy(skel_);
      skel_ = nullptr;
      fail(fmt::format("cannot add {} to the targets map", targets_[i].path), err);
    }
  }
  if (const int err = ioctl_latency_bpf__attach(skel_); err != 0) {
    ioctl_latency_bpf__destroy(skel_);
    skel_ = nullptr;
    fail("cannot attach to syscalls:sys_enter_ioctl/sys_exit_ioctl", err);
  }
  attached_ = true;
}

IoctlLatencyProbe::~IoctlLatencyProbe() {
  if (skel_ != nullptr) ioctl_latency_bpf__destroy(skel_);
}

void IoctlLatencyProbe::detach() {
  if (!attached_) return;
  ioctl_latency_bpf__detach(skel_);
  attached_ = false;
}

IoctlReport IoctlLatencyProbe::read(double seconds) const {
  IoctlReport report;
  report.targets = targets_;
  report.seconds = seconds;
  const int hists = bpf_map__fd(skel_->maps.hists);
  ioctl_hist_key key{};
  ioctl_hist_key next{};
  const ioctl_hist_key* prev = nullptr;
  while (bpf_map_get_next_key(hists, prev, &next) == 0) {
    key = next;
    prev = &key;
    ioctl_hist h{};
    if (bpf_map_lookup_elem(hists, &key, &h) != 0) continue;  // deleted meanwhile: never here
    if (key.target >= targets_.size()) {
      throw gpulab::RunError(
          fmt::format("the BPF map names target {} of {}", key.target, targets_.size()));
    }
    IoctlSeries s;
    s.target = key.target;
    s.request = key.cmd;
    s.errors = h.errors;
    s.sum_ns = h.sum_ns;
    std::copy(std::begin(h.slots), std::end(h.slots), s.slots.begin());
    s.count = std::accumulate(s.slots.begin(), s.slots.end(), std::uint64_t{0});
    if (!attached_ && s.count != h.count) {
      throw gpulab::RunError(fmt::format("{} {:#010x}: {} calls counted but {} in the buckets",
                                         targets_[s.target].path, s.request, h.count, s.count));
    }
    report.series.push_back(s);
  }
  const int drops = bpf_map__fd(skel_->maps.drops);
  for (std::uint32_t kind = 0; kind < IOCTL_DROP_KINDS; ++kind) {
    std::uint64_t n = 0;
    if (bpf_map_lookup_elem(drops, &kind, &n) != 0) continue;
    (kind == IOCTL_DROP_INFLIGHT_FULL ? report.dropped_inflight : report.dropped_keys) = n;
  }
  sort_series(report);
  return report;
}

}  // namespace exporter
