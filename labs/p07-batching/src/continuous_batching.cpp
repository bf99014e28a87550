#include "batching/continuous_batching.hpp"

#include <algorithm>
#include <deque>
#include <limits>
#include <stdexcept>

namespace batching {
namespace {

struct Slot {
  std::size_t index;
  std::uint32_t prefill_left;  // prompt tokens still to compute (chunked mode)
  std::uint32_t generated;     // output tokens emitted so far
  double last_token_ms;
  std::uint32_t held = 0;  // engine_kv: tokens it prefills up to (prompt + generated at admission)
};

}  // namespace

std::vector<Outcome> simulate_continuous(std::span<const Request> reqs,
                                         const ContinuousOptions& opt, const CostModel& cost) {
  if (opt.max_batch == 0) throw std::invalid_argument("max_batch must be at least 1");
  for (std::size_t i = 1; i < reqs.size(); ++i)
    if (reqs[i].arrival_ms < reqs[i - 1].arrival_ms)
      throw std::invalid_argument("requests must be sorted by arrival");
  if (opt.kv && opt.engine_kv) throw std::invalid_argument("kv and engine_kv are exclusive");
  std::vector<Outcome> out(reqs.size());
  EngineKv* const ekv = opt.engine_kv;
  // engine_kv: what a preempted request had emitted, and when, kept for its return.
  std::vector<std::uint32_t> resume_generated(ekv ? reqs.size() : 0);
  std::vector<double> resume_last(ekv ? reqs.size() : 0);
  std::vector<char> admitted_before(ekv ? reqs.size() : 0);
  const BatchPolicy policy{opt.max_batch, opt.prefill_chunk, opt.budget_counts_decodes};
  const double iter = cost.iteration_ms(opt.max_batch);
  std::deque<std::size_t> queue;
  std::vector<Slot> running;
  running.reserve(opt.max_batch);
  std::size_t next = 0, done = 0;
  double t = reqs.empty() ? 0 : reqs.front().arrival_ms;

  auto emit = [&](Slot& s, double now) {
    Outcome& o = out[s.index];
    if (s.generated == 0)
      o.first_token_ms = now;
    else
      o.worst_gap_ms = std::max(o.worst_gap_ms, now - s.last_token_ms);
    s.last_token_ms = now;
    ++s.generated;
  };
  // A decode row computes the K/V of the sequence's last emitted token.
  auto mark_decode = [&](const Slot& s) {
    const std::uint32_t pos = reqs[s.index].prompt_tokens + s.generated - 1;
    ekv->computed(s.index, pos, pos + 1);
  };
  auto retire = [&] {
    std::erase_if(running, [&](const Slot& s) {
      if (s.prefill_left > 0 || s.generated < reqs[s.index].output_tokens) return false;
      out[s.index].served = true;
      out[s.index].finish_ms = s.last_token_ms;
      if (opt.kv) opt.kv->finish(s.index);
      if (ekv) ekv->release(s.index);
      ++done;
      return true;
    });
  };

  while (done < reqs.size()) {
    while (next < reqs.size() && reqs[next].arrival_ms <= t) queue.push_back(next++);

    // engine_kv: every generating sequence's pending token claims its slot first; when the pool
    // is dry the most recently admitted sequence is preempted (recomputed later), itself included.
    std::size_t admit_budget = std::numeric_limits<std::size_t>::max();
    if (ekv) {
      auto preempt = [&](std::size_t k) {
        const Slot& v = running[k];
        resume_generated[v.index] = v.generated;
        resume_last[v.index] = v.last_token_ms;
        ekv->preempt(v.index);
        queue.push_front(v.index);
        running.erase(running.begin() + static_cast<std::ptrdiff_t>(k));
      };
      const auto gen = static_cast<std::size_t>(std::count_if(
          running.begin(), running.end(), [](const Slot& s) { return s.prefill_left == 0; }));
      const std::size_t limit = policy.decode_rows(gen);
      std::size_t claimed = 0;
      for (std::size_t k = 0; k < running.size() && claimed < limit;) {
        const Slot& s = running[k];
        if (s.prefill_left > 0) {
          ++k;
          continue;
        }
        bool preempted_self = false;
        while (!ekv->hold(s.index, reqs[s.index].prompt_tokens + s.generated)) {
          const std::size_t victim = running.size() - 1;
          preempt(victim);
          if (victim == k) {
            preempted_self = true;
            break;
          }
        }
        if (preempted_self) break;  // it was the last one
        ++claimed;
        ++k;
      }
      // As the engine: admission only while the step's token budget has room.
      if (policy.chunked()) {
        admit_budget = policy.prompt_budget(claimed);
        for (const Slot& s : running)
          if (s.prefill_left > 0) BatchPolicy::take_chunk(s.prefill_left, admit_budget);
      }
    }

    // Admit into free slots, oldest first.
    std::vector<Slot> admitted;
    while (policy.has_slot(running.size() + admitted.size()) && !queue.empty() &&
           admit_budget > 0) {
      const std::size_t i = queue.front();
      const Request& r = reqs[i];
      if (opt.shed_late &&
          t - r.arrival_ms + cost.prefill_ms(r.prompt_tokens) >= opt.shed_ttft_ms) {
        queue.pop_front();  // it cannot meet its TTFT any more: serving it only delays others
        ++done;
        continue;
      }
      if (ekv) {
        if (!ekv->can_ever_fit(r)) {
          queue.pop_front();  // larger than the whole KV pool: reject rather than wait forever
          ++done;
          continue;
        }
        const std::uint32_t held = r.prompt_tokens + resume_generated[i];
        const auto computed = ekv->admit(i, r, held);
        if (!computed) break;  // the pool is short: wait for running requests to free blocks
        queue.pop_front();
        if (!admitted_before[i]) out[i].cached_tokens = *computed;
        admitted_before[i] = 1;
        admitted.push_back({i, held - *computed, resume_generated[i], resume_last[i], held});
        if (policy.chunked()) BatchPolicy::take_chunk(held - *computed, admit_budget);
        continue;
      }
      std::uint32_t cached = 0;
      if (opt.kv) {
        if (!opt.kv->can_ever_fit(r)) {
          queue.pop_front();  // larger than the whole KV pool: reject rather than wait forever
          ++done;
          continue;
        }
        const auto hit = opt.kv->admit(i, r);
        if (!hit) break;  // KV memory is short: wait for running requests to finish
        cached = *hit;
      }
      queue.pop_front();
      out[i].cached_tokens = cached;
      admitted.push_back({i, r.prompt_tokens - cached, 0, 0});
    }

    // Decode first: every sequence past its prompt (in chunked mode it emitted when its prompt
    // completed).
    const auto generating = static_cast<std::size_t>(std::count_if(
        running.begin(), running.end(), [](const Slot& s) { return s.prefill_left == 0; }));
    const bool any_decoding = generating > 0;
    if (!policy.chunked()) {
      // Separate prefill step: it stalls the decodes already in the batch.
      if (!admitted.empty()) {
        double tokens = 0;
        for (const Slot& s : admitted) tokens += s.prefill_left;
        t += cost.prefill_ms(tokens);
        for (Slot& s : admitted) {
          if (ekv) ekv->computed(s.index, s.held - s.prefill_left, s.held);
          s.prefill_left = 0;
          emit(s, t);
        }
      }
      if (any_decoding) {
        t += iter;
        for (Slot& s : running) {
          if (ekv) mark_decode(s);
          emit(s, t);
        }
      }
      running.insert(running.end(), admitted.begin(), admitted.end());
    } else {
      // One fused iteration: the decodes plus the prompt tokens the budget leaves.
      running.insert(running.end(), admitted.begin(), admitted.end());
      const std::size_t decodes = policy.decode_rows(generating);
      std::size_t budget = policy.prompt_budget(decodes);
      std::vector<std::size_t> completes;
      double chunk_tokens = 0;
      for (std::size_t k = 0; k < running.size() && budget > 0; ++k) {
        Slot& s = running[k];
        if (s.prefill_left == 0) continue;
        const auto take =
            static_cast<std::uint32_t>(BatchPolicy::take_chunk(s.prefill_left, budget));
        if (ekv) ekv->computed(s.index, s.held - s.prefill_left, s.held - s.prefill_left + take);
        s.prefill_left -= take;
        chunk_tokens += take;
        if (s.prefill_left == 0) completes.push_back(k);
      }
      if (decodes > 0 || chunk_tokens > 0) {
        t += (decodes > 0 ? iter : 0.0) + cost.prefill_ms(chunk_tokens);
        std::size_t decoded = 0;
        for (Slot& s : running)
          if (s.prefill_left == 0 && s.generated > 0 && decoded < decodes) {
            if (ekv) mark_decode(s);
            emit(s, t);
            ++decoded;
          }
        for (const std::size_t k : completes) emit(running[k], t);
      }
    }
    retire();

    if (running.empty() && queue.empty() && next < reqs.size())
      t = std::max(t, reqs[next].arrival_ms);  // idle: jump to the next arrival
  }
  return out;
}

}  // namespace batching
