#include "batching/disaggregation.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace batching {

double handoff_ms(const DisaggOptions& o, std::uint32_t prompt_tokens) {
  return static_cast<double>(o.kv_bytes_per_token) * prompt_tokens / (o.link_gb_per_s * 1e9) *
         1000.0;
}

std::vector<Outcome> simulate_disaggregated(std::span<const Request> reqs, const DisaggOptions& opt,
                                            const CostModel& cost) {
  if (opt.max_batch == 0) throw std::invalid_argument("max_batch must be at least 1");
  if (!(opt.link_gb_per_s > 0)) throw std::invalid_argument("link bandwidth must be > 0");
  std::vector<Outcome> out(reqs.size());
  // A request holds one of max_batch decode slots from the moment its prefill
  // starts (so the prefill GPU never outruns the decode GPU), through the KV
  // hand-off, until its last token. Prefill GPU and link serve FIFO.
  struct Slot {
    std::size_t index;
    double ready;  // KV has arrived on the decode GPU
    std::uint32_t generated;
    double last;
  };
  std::vector<Slot> slots;
  const double iter = cost.iteration_ms(opt.max_batch);
  double prefill_free = 0, link_free = 0;
  std::size_t next = 0, done = 0;
  double t = reqs.empty() ? 0 : reqs.front().arrival_ms;
  while (done < reqs.size()) {
    // Hand free slots to arrived requests: their prefill and hand-off are scheduled now.
    while (slots.size() < opt.max_batch && next < reqs.size() && reqs[next].arrival_ms <= t) {
      const Request& r = reqs[next];
      const double end =
          std::max(prefill_free, t) + cost.prefill_ms(r.prompt_tokens);  // t >= arrival
      prefill_free = end;
      out[next].first_token_ms = end;  // streamed from the prefill GPU
      link_free = std::max(end, link_free) + handoff_ms(opt, r.prompt_tokens);
      slots.push_back({next, link_free, 1, end});
      ++next;
    }
    const bool decoding =
        std::any_of(slots.begin(), slots.end(), [&](const Slot& s) { return s.ready <= t; });
    if (decoding) {
      const double began = t;
      t += iter;
      for (Slot& s : slots) {
        if (s.ready > began) continue;  // KV not there when the iteration began
        out[s.index].worst_gap_ms = std::max(out[s.index].worst_gap_ms, t - s.last);
        s.last = t;
        ++s.generated;
      }
    }
    std::erase_if(slots, [&](const Slot& s) {
      if (s.generated < reqs[s.index].output_tokens || s.ready > t) return false;
      out[s.index].served = true;
      out[s.index].finish_ms = s.last;
      ++done;
      return true;
    });
    if (!decoding) {
      // Nothing to decode yet: jump to the next hand-off or (with a free slot) the next arrival.
      double wake = std::numeric_limits<double>::infinity();
      for (const Slot& s : slots) wake = std::min(wake, s.ready);
      if (slots.size() < opt.max_batch && next < reqs.size())
        wake = std::min(wake, reqs[next].arrival_ms);
      if (std::isfinite(wake)) t = std::max(t, wake);
    }
  }
  return out;
}

}  // namespace batching
