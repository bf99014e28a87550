// gpulab-ioctl-latency: ioctl latency per device file and request code, measured in the kernel
// by a CO-RE BPF program (ebpf/), printed as a table and written as Prometheus text for
// gpu-exporter --textfile-dir. Parses flags, attaches the probe, waits, reports.
#include <fmt/format.h>
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <string>
#include <vector>

#include "exporter/ioctl_latency.hpp"
#include "exporter/ioctl_target.hpp"
#include "gpulab/cli.hpp"
#include "gpulab/flag_checks.hpp"
#include "gpulab/json.hpp"
#include "gpulab/metrics_out.hpp"
#include "gpulab/output_file.hpp"
#include "ioctl_latency_probe.hpp"

namespace {

constexpr const char* kProgram = "gpulab-ioctl-latency";
constexpr double kMaxSeconds = 30 * 24 * 3600.0;

// Waits up to `seconds` for SIGINT or SIGTERM (blocked in every thread); true if one came.
bool wait_for_signal(const sigset_t& signals, double seconds) {
  timespec ts{};
  ts.tv_sec = static_cast<time_t>(seconds);
  ts.tv_nsec = static_cast<long>((seconds - static_cast<double>(ts.tv_sec)) * 1e9);
  return sigtimedwait(&signals, nullptr, &ts) > 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "gpulab-ioctl-latency: ioctl latency per device file and request code, timed in the kernel\n"
      "by a BPF program on syscalls:sys_enter_ioctl/sys_exit_ioctl (log2 histograms). Needs root\n"
      "and a kernel with BTF; mounts tracefs on /sys/kernel/tracing if it is not mounted."};
  gpulab::CommonOptions common;
  std::vector<std::string> devices;
  double duration = 0;
  double interval = 15;
  std::string metrics_out;
  std::string ready_file;

  app.add_option("--device", devices,
                 "a device file to watch: a character device (/dev/nvidia0, /dev/nvidiactl) or a "
                 "file a FUSE driver serves (fakegpud MOUNTDIR/fakegpu); repeat for more, up to 64")
      ->required();
  app.add_option(
         "--duration", duration,
         "seconds to measure, 0.01 to 2592000 (30 days); without it, until SIGINT or SIGTERM")
      ->check(gpulab::finite_in(0.01, kMaxSeconds));
  app.add_option("--interval", interval,
                 "with --metrics-out, rewrite FILE every this many seconds while measuring "
                 "(0.1 to 3600)")
      ->check(gpulab::finite_in(0.1, 3600))
      ->capture_default_str();
  gpulab::add_metrics_out_flag(app, metrics_out,
                               "device_ioctl_latency_seconds per device and request, at start, "
                               "every --interval and at the end,");
  app.add_option("--ready-file", ready_file,
                 "write \"attached\" to this file once the probe counts calls (for scripts)");
  gpulab::add_json_flag(app, common);

  return gpulab::run_program(kProgram, app, argc, argv, [&]() -> int {
    const auto targets = exporter::resolve_ioctl_targets(devices);
    exporter::check_ioctl_probe_prerequisites();

    // Blocked before anything else runs, so a signal during loading is not lost.
    sigset_t signals;
    sigemptyset(&signals);
    sigaddset(&signals, SIGINT);
    sigaddset(&signals, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &signals, nullptr);

    exporter::IoctlLatencyProbe probe(targets);
    const auto start = std::chrono::steady_clock::now();
    const auto elapsed = [&] {
      return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    };
    const auto write_metrics = [&](const exporter::IoctlReport& report) {
      if (metrics_out.empty()) return;
      gpulab::prom::Exposition e;
      exporter::add_ioctl_latency_metrics(e, report);
      gpulab::write_metrics_out(metrics_out, e);
    };
    write_metrics(probe.read(0));  // a bad path fails now, not after the whole run
    if (!ready_file.empty()) {
      if (auto w = gpulab::write_file(ready_file, "attached\n"); !w)
        throw gpulab::UsageError("--ready-file: " + w.error().message);
    }

    const bool forever = duration == 0;
    for (;;) {
      const double left = forever ? interval : duration - elapsed();
      if (left <= 0) break;
      const double step = metrics_out.empty() ? left : std::min(left, interval);
      if (wait_for_signal(signals, step)) break;
      if (!metrics_out.empty() && (forever || duration - elapsed() > 0))
        write_metrics(probe.read(elapsed()));
    }
    const double seconds = elapsed();
    probe.detach();
    const auto report = probe.read(seconds);
    write_metrics(report);
    if (common.json) {
      gpulab::print_json(exporter::ioctl_latency_json(report));
    } else {
      fmt::print("{}", exporter::ioctl_latency_table(report));
    }
    return gpulab::kExitOk;
  });
}
