// Runs an Engine on its own thread for the HTTP server: requests come in from
// any thread, each with a listener that hears its tokens and its finish (on
// the engine thread, outside the lock, so a listener must only hand the
// event over). It also times what a client sees: TTFT from submit to first
// token, TPOT between tokens, kept as Prometheus histograms.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>
#include <unordered_map>

#include "gpulab/prom_text.hpp"
#include "serving/engine.hpp"

namespace serving {

class EngineLoop {
 public:
  using Listener = std::function<void(const TokenEvent&)>;

  explicit EngineLoop(Engine& engine);
  // stop(), then join.
  ~EngineLoop();
  EngineLoop(const EngineLoop&) = delete;
  EngineLoop& operator=(const EngineLoop&) = delete;

  [[nodiscard]] gpulab::Expected<RequestId> submit(std::vector<TokenId> prompt, const SamplingParams& params,
                                                  Listener listener, Refusal* why = nullptr);
  void cancel(RequestId id);
  // Ends the thread; every request still in flight hears a kCancelled finish.
  void stop();

  struct Snapshot {
    EngineStats stats;
    EngineOptions options;
    gpulab::prom::Exposition latency;  // serving_ttft_seconds, serving_tpot_seconds
    double busy_seconds = 0;           // time spent inside step()
  };
  [[nodiscard]] Snapshot snapshot() const;

 private:
  struct Entry {
    Listener listener;
    std::chrono::steady_clock::time_point submitted, last_token;
    bool got_token = false;
  };
  void run();

  Engine* engine_;
  mutable std::mutex m_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::unordered_map<RequestId, Entry> entries_;
  gpulab::prom::Exposition latency_;
  double busy_seconds_ = 0;
  std::thread thread_;  // last: starts after everything it reads exists
};

}  // namespace serving
