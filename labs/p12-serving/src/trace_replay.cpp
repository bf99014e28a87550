#include "serving/trace_replay.hpp"

#include <fmt/format.h>

#include <chrono>
#include <deque>
#include <stdexcept>
#include <thread>
#include <unordered_map>

namespace serving {

ReplayResult replay_trace(Engine& engine, const TraceWorkload& w) {
  using Clock = std::chrono::steady_clock;
  const auto& reqs = w.requests;
  ReplayResult r;
  r.outcomes.resize(reqs.size());
  std::vector<double> last_token(reqs.size(), 0.0);
  std::vector<std::size_t> emitted(reqs.size(), 0);
  std::unordered_map<RequestId, std::size_t> index;
  std::deque<std::size_t> backlog;  // arrived, not yet accepted by the engine's queue
  std::size_t next = 0, finished = 0;
  const auto t0 = Clock::now();
  auto now_ms = [&] {
    return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  };

  while (finished < reqs.size()) {
    const double now = now_ms();
    while (next < reqs.size() && reqs[next].arrival_ms <= now) backlog.push_back(next++);
    while (!backlog.empty()) {
      const std::size_t i = backlog.front();
      SamplingParams p;
      p.temperature = 0;
      p.max_tokens = reqs[i].output_tokens;
      Refusal why;
      auto id = engine.submit(w.prompts[i], p, &why);
      if (!id) {
        if (why.kind == SubmitError::kQueueFull) break;
        throw std::runtime_error(fmt::format("request {}: {}", i, why.message));
      }
      index[id.value()] = i;
      backlog.pop_front();
    }
    if (engine.idle()) {
      if (next == reqs.size() && backlog.empty())
        throw std::logic_error("replay: the engine is idle with requests unfinished");
      if (backlog.empty())
        std::this_thread::sleep_until(
            t0 + std::chrono::duration_cast<Clock::duration>(
                     std::chrono::duration<double, std::milli>(reqs[next].arrival_ms)));
      continue;
    }
    const EngineStats before = engine.stats();
    const double start = now_ms();
    const auto events = engine.step();
    const double end = now_ms();
    const EngineStats after = engine.stats();
    if (after.steps != before.steps)
      r.steps.push_back({static_cast<double>(after.decode_rows - before.decode_rows),
                         static_cast<double>(after.prefill_tokens - before.prefill_tokens),
                         end - start});
    for (const TokenEvent& e : events) {
      const std::size_t i = index.at(e.id);
      batching::Outcome& o = r.outcomes[i];
      if (e.token) {
        if (emitted[i]++ == 0)
          o.first_token_ms = end;
        else
          o.worst_gap_ms = std::max(o.worst_gap_ms, end - last_token[i]);
        last_token[i] = end;
      }
      if (e.finish) {
        o.served = emitted[i] == reqs[i].output_tokens;
        o.finish_ms = end;
        o.cached_tokens = static_cast<std::uint32_t>(e.cached_tokens);
        ++finished;
      }
    }
  }
  r.stats = engine.stats();
  r.seconds = now_ms() / 1000.0;
  return r;
}

}  // namespace serving
