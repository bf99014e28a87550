#include "platform/daemons.hpp"

#include <fmt/format.h>
#include <pthread.h>
#include <signal.h>

#include <atomic>
#include <functional>
#include <thread>

#include "gpulab/errors.hpp"
#include "gpulab/output_file.hpp"
#include "platform/control_server.hpp"

namespace platform {
namespace {

// Blocks SIGTERM/SIGINT in every thread and runs `on_signal` from a thread of
// its own when one arrives, so shutdown is orderly (no async-signal limits).
class SignalWaiter {
 public:
  explicit SignalWaiter(std::function<void()> on_signal) {
    sigemptyset(&set_);
    sigaddset(&set_, SIGTERM);
    sigaddset(&set_, SIGINT);
    sigaddset(&set_, SIGUSR1);  // only to wake the waiter on normal exit
    pthread_sigmask(SIG_BLOCK, &set_, nullptr);
    thread_ = std::thread([this, f = std::move(on_signal)] {
      int sig = 0;
      sigwait(&set_, &sig);
      if (sig != SIGUSR1) f();
    });
  }
  ~SignalWaiter() {
    pthread_kill(thread_.native_handle(), SIGUSR1);
    thread_.join();
  }
  SignalWaiter(const SignalWaiter&) = delete;
  SignalWaiter& operator=(const SignalWaiter&) = delete;

 private:
  sigset_t set_{};
  std::thread thread_;
};

std::string host_part(const std::string& listen) {
  const auto colon = listen.rfind(':');
  const std::string host = listen.substr(0, colon);
  return host == "0.0.0.0" || host.empty() ? "127.0.0.1" : host;
}

}  // namespace

void write_ready_file(const std::filesystem::path& path, const std::string& text) {
  if (auto w = gpulab::write_file(path, text + "\n"); !w) throw gpulab::UsageError("--ready-file: " + w.error().message);
}

int run_control_daemon(ControlDaemonOptions options) {
  HttpService http;
  std::atomic<bool> stop_requested{false};
  // First, before any thread exists: every later thread inherits the mask.
  SignalWaiter waiter([&] {
    stop_requested = true;
    http.stop();
  });
  const int port = http.bind(options.listen);  // before the state: a taken port must not touch it
  const std::string url = fmt::format("http://{}:{}", host_part(options.listen), port);
  if (options.control.public_url.empty()) options.control.public_url = url;
  ControlPlane cp(options.control);
  const auto lic = cp.licence();
  if (lic.state == "GRACE") {
    fmt::print(stderr, "gpulabd control: warning: licence in GRACE: {} ({} days left)\n", lic.message, lic.days_left);
  }
  add_control_routes(http, cp);
  cp.start();
  std::thread server([&] { http.listen_after_bind(); });
  while (!http.is_running() && !stop_requested) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  if (stop_requested) http.stop();
  fmt::print(stderr, "gpulabd control: serving {} (state {}, licence {})\n", url, options.control.state_dir.string(),
             lic.state);
  if (!options.ready_file.empty()) write_ready_file(options.ready_file, url);
  server.join();
  cp.stop();
  return gpulab::kExitOk;
}

int run_agent_daemon(AgentDaemonOptions options) {
  std::atomic<Agent*> running{nullptr};
  std::atomic<bool> stop_requested{false};
  // Before the Agent: conformance loads backends that start threads (OpenBLAS, PoCL).
  SignalWaiter waiter([&] {
    stop_requested = true;
    if (Agent* a = running.load()) a->stop();
  });
  Agent agent(options.agent);
  running = &agent;
  if (stop_requested) return gpulab::kExitOk;
  const std::string url = agent.bind();
  for (const auto& line : agent.certification_lines()) fmt::print(stderr, "gpulabd agent: conformance: {}\n", line);
  for (const auto& [backend, peak] : agent.peaks()) {
    fmt::print(stderr, "gpulabd agent: peak {}: {:.3g} GFLOP/s ({}; the MFU gauge divides by it)\n", backend,
               peak.flops / 1e9, peak.source);
  }
  for (const auto& line : agent.isolation_notes()) fmt::print(stderr, "gpulabd agent: {}\n", line);
  fmt::print(stderr, "gpulabd agent: {} serving {}, control plane {}\n", options.agent.name, url,
             options.agent.control_url);
  if (!options.ready_file.empty()) write_ready_file(options.ready_file, url);
  const int rc = agent.run();
  running = nullptr;
  return rc;
}

}  // namespace platform
