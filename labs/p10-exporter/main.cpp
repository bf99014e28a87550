// gpu-exporter: GPU and lab metrics in the Prometheus text format, served on
// /metrics or printed once. Parses flags, wires the sources, and serves.
#include <fmt/format.h>
#include <pthread.h>
#include <signal.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <thread>

#include "exporter/collector.hpp"
#include "exporter/fakegpu_source.hpp"
#include "exporter/http_server.hpp"
#include "exporter/json_output.hpp"
#include "exporter/nvml_source.hpp"
#include "exporter/simulated_source.hpp"
#include "exporter/textfile_source.hpp"
#include "gpulab/cli.hpp"
#include "gpulab/json.hpp"
#include "gpulab/prom_text.hpp"

namespace {

constexpr const char* kProgram = "gpu-exporter";

std::chrono::milliseconds to_ms(double seconds) {
  return std::chrono::milliseconds(static_cast<std::int64_t>(seconds * 1000));
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "gpu-exporter: GPU metrics (NVML, fakegpu, simulated) and the labs' own metrics in the\n"
      "Prometheus text format 0.0.4, collected off the request path and served on /metrics."};
  gpulab::CommonOptions common;
  std::string listen = "127.0.0.1:9400";
  bool once = false;
  std::string interval = "1s";
  unsigned simulate = 0;
  std::string inject;
  double time_scale = 1;
  std::string at = "0s";
  std::string textfile_dir;
  std::string fakegpu_stats = exporter::FakegpuSource::kDefaultStatsPath;
  std::string nvml_lib = "libnvidia-ml.so.1";
  bool dcgm_compat = false;
  std::string request_timeout = "5s";
  std::size_t threads = 16;

  app.add_option("--listen", listen, "HOST:PORT to serve /metrics on (port 0: any free port)")
      ->capture_default_str();
  app.add_flag("--once", once, "print one exposition to stdout and exit (textfile-collector mode)");
  app.add_option("--interval", interval, "how often the sources are collected (ms, s, m)")
      ->capture_default_str();
  app.add_option("--simulate", simulate,
                 "simulate N GPUs instead of reading NVML and fakegpu (deterministic with --seed)");
  gpulab::add_seed_flag(app, common);
  gpulab::add_json_flag(app, common);
  app.add_option("--inject", inject,
                 "faults for --simulate: xid:CODE[:GPU]@T, thermal:GPU@T, power:GPU@T, leak:GPU@T, "
                 "ecc:GPU@T, comma-separated (T: 30s, 1.5m, 500ms)");
  app.add_option("--time-scale", time_scale,
                 "simulated seconds per real second while serving (e.g. 30: xid at 30s shows "
                 "after 1 s)")
      ->capture_default_str();
  app.add_option("--at", at, "simulated time of --once, or at start when serving")
      ->capture_default_str();
  app.add_option("--textfile-dir", textfile_dir,
                 "re-expose DIR/*.prom written by lab programs with --metrics-out");
  app.add_option("--fakegpu-stats", fakegpu_stats,
                 "the P04 fakegpu stats file (sysfs, or fakegpud MOUNTDIR/stats)")
      ->capture_default_str();
  app.add_option("--nvml-lib", nvml_lib, "the NVML library to dlopen")->capture_default_str();
  app.add_flag("--dcgm-compat", dcgm_compat,
               "also emit dcgm-exporter's DCGM_FI_DEV_* names and labels (not promtool-clean)");
  app.add_option("--request-timeout", request_timeout,
                 "a request must arrive whole within this (slowloris guard)")
      ->capture_default_str();
  app.add_option("--threads", threads, "HTTP worker threads")->capture_default_str();

  return gpulab::run_program(kProgram, app, argc, argv, [&]() -> int {
    const double at_s = exporter::parse_duration(at);
    const double interval_s = exporter::parse_duration(interval);
    const double timeout_s = exporter::parse_duration(request_timeout);
    if (interval_s < 0.01) throw gpulab::UsageError("--interval must be at least 10ms");
    if (timeout_s < 0.05) throw gpulab::UsageError("--request-timeout must be at least 50ms");
    if (!(time_scale > 0) || time_scale > 1e6) {
      throw gpulab::UsageError("--time-scale must be in (0, 1e6]");
    }
    if (threads == 0 || threads > 1024) throw gpulab::UsageError("--threads must be 1..1024");
    if (common.json && !once) throw gpulab::UsageError("--json needs --once");
    if (!inject.empty() && simulate == 0) {
      throw gpulab::UsageError("--inject needs --simulate N");
    }
    const exporter::ListenAddress address = exporter::parse_listen_address(listen);

    // Collector and server threads inherit this mask; one thread waits for the signals.
    sigset_t signals;
    sigemptyset(&signals);
    sigaddset(&signals, SIGINT);
    sigaddset(&signals, SIGTERM);
    if (!once) pthread_sigmask(SIG_BLOCK, &signals, nullptr);

    std::vector<std::unique_ptr<exporter::Source>> sources;
    if (simulate > 0) {
      exporter::SimulatedGpus gpus(simulate, common.seed, exporter::parse_injections(inject));
      const auto start = std::chrono::steady_clock::now();
      std::function<double()> clock = [at_s] { return at_s; };
      if (!once) {
        clock = [at_s, start, time_scale] {
          const std::chrono::duration<double> real = std::chrono::steady_clock::now() - start;
          return at_s + real.count() * time_scale;
        };
      }
      sources.push_back(
          std::make_unique<exporter::SimulatedSource>(std::move(gpus), clock, dcgm_compat));
    } else {
      sources.push_back(std::make_unique<exporter::NvmlSource>(nvml_lib, dcgm_compat));
      sources.push_back(std::make_unique<exporter::FakegpuSource>(fakegpu_stats));
    }
    if (!textfile_dir.empty()) {
      sources.push_back(std::make_unique<exporter::TextfileSource>(textfile_dir));
    }
    exporter::Collector collector(std::move(sources), [](const std::string& line) {
      fmt::print(stderr, "{}: {}\n", kProgram, line);
      std::fflush(stderr);
    });

    if (once) {
      const std::string text = collector.collect();
      if (common.json) {
        // The text this process rendered, read back: one source of truth for both outputs.
        gpulab::print_json(
            exporter::exposition_json(gpulab::prom::parse(text).value(), collector.source_up()));
      } else {
        fmt::print("{}", text);
      }
      return gpulab::kExitOk;
    }

    collector.start(to_ms(interval_s));
    exporter::ServerOptions options;
    options.gate.request_timeout = to_ms(timeout_s);
    options.threads = threads;
    exporter::MetricsServer server(collector, options);
    const int port = server.bind(address);
    const std::string host = address.host.find(':') != std::string::npos
                                 ? fmt::format("[{}]", address.host)
                                 : address.host;
    fmt::print(stderr, "{}: listening on http://{}:{}/metrics\n", kProgram, host, port);
    std::fflush(stderr);

    std::thread waiter([&] {
      int sig = 0;
      sigwait(&signals, &sig);
      server.stop();
    });
    const bool ok = server.run();
    pthread_kill(waiter.native_handle(), SIGTERM);
    waiter.join();
    collector.stop();
    if (!ok) throw gpulab::RunError("the listening socket failed");
    return gpulab::kExitOk;
  });
}
