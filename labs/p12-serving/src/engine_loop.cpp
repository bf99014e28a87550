#include "serving/engine_loop.hpp"

namespace serving {
namespace {
using Clock = std::chrono::steady_clock;
// 0.3 and 0.04 are the P10 SLO pack's thresholds (TTFT < 300 ms, TPOT < 40 ms,
// labs/p10-exporter/slo/rules/slo.rules.yml): its SLIs read those buckets.
const std::vector<double> kTtftBounds = {0.01, 0.025, 0.05, 0.1, 0.25, 0.3, 0.5, 1, 2.5, 5, 10, 30};
const std::vector<double> kTpotBounds = {0.001, 0.0025, 0.005, 0.01, 0.025, 0.04, 0.05, 0.1, 0.25, 0.5, 1};
constexpr const char* kTtft = "serving_ttft_seconds";
constexpr const char* kTpot = "serving_tpot_seconds";
double seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }
}  // namespace

EngineLoop::EngineLoop(Engine& engine) : engine_(&engine) {
  // Zero series up front, so a scrape before the first request still shows both histograms.
  latency_.histogram(kTtft, "Time from a request's arrival to its first token.", kTtftBounds)
      .set_histogram({}, std::vector<double>(kTtftBounds.size() + 1, 0), 0);
  latency_.histogram(kTpot, "Time between consecutive output tokens of a request.", kTpotBounds)
      .set_histogram({}, std::vector<double>(kTpotBounds.size() + 1, 0), 0);
  thread_ = std::thread([this] { run(); });
}

EngineLoop::~EngineLoop() {
  stop();
  if (thread_.joinable()) thread_.join();
}

gpulab::Expected<RequestId> EngineLoop::submit(std::vector<TokenId> prompt, const SamplingParams& params,
                                               Listener listener, Refusal* why) {
  std::lock_guard lk(m_);
  if (stop_) {
    if (why) *why = Refusal{SubmitError::kQueueFull, "", "server is shutting down"};
    return gpulab::Error{"server is shutting down"};
  }
  auto id = engine_->submit(std::move(prompt), params, why);
  if (!id) return id;
  const auto now = Clock::now();
  entries_[id.value()] = Entry{std::move(listener), now, now, false};
  cv_.notify_one();
  return id;
}

void EngineLoop::cancel(RequestId id) {
  std::lock_guard lk(m_);
  if (!entries_.contains(id)) return;
  engine_->cancel(id);
  cv_.notify_one();
}

void EngineLoop::stop() {
  std::vector<std::pair<Listener, TokenEvent>> calls;
  {
    std::lock_guard lk(m_);
    if (stop_) return;
    stop_ = true;
    for (auto& [id, e] : entries_) {
      TokenEvent ev;
      ev.id = id;
      ev.finish = FinishReason::kCancelled;
      calls.emplace_back(std::move(e.listener), ev);
    }
    entries_.clear();
  }
  cv_.notify_all();
  for (auto& [listener, ev] : calls) listener(ev);
}

void EngineLoop::run() {
  std::unique_lock lk(m_);
  std::vector<std::pair<Listener, TokenEvent>> calls;
  for (;;) {
    cv_.wait(lk, [&] { return stop_ || !engine_->idle(); });
    if (stop_) return;
    const auto start = Clock::now();
    // The lock is held through the step: the engine is single-threaded, and a
    // submit waits at most one step.
    const auto events = engine_->step();
    const auto now = Clock::now();
    busy_seconds_ += seconds(now - start);
    for (const auto& ev : events) {
      const auto it = entries_.find(ev.id);
      if (it == entries_.end()) continue;
      Entry& e = it->second;
      if (ev.token) {
        if (!e.got_token)
          latency_.histogram(kTtft, "", kTtftBounds).observe({}, seconds(now - e.submitted));
        else
          latency_.histogram(kTpot, "", kTpotBounds).observe({}, seconds(now - e.last_token));
        e.got_token = true;
        e.last_token = now;
      }
      if (ev.finish) {
        calls.emplace_back(std::move(e.listener), ev);
        entries_.erase(it);
      } else {
        calls.emplace_back(e.listener, ev);
      }
    }
    lk.unlock();
    for (auto& [listener, ev] : calls) listener(ev);
    calls.clear();
    lk.lock();
  }
}

EngineLoop::Snapshot EngineLoop::snapshot() const {
  std::lock_guard lk(m_);
  Snapshot s;
  s.stats = engine_->stats();
  s.options = engine_->options();
  s.latency.merge(latency_);
  s.busy_seconds = busy_seconds_;
  return s;
}

}  // namespace serving
