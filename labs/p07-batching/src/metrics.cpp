#include "batching/metrics.hpp"

#include <algorithm>
#include <stdexcept>
#include <vector>

#include "gpulab/stats.hpp"

namespace batching {

bool meets_slo(const Request& r, const Outcome& o, const Slo& slo) {
  return o.served && ttft_ms(r, o) < slo.ttft_ms && tpot_ms(r, o) < slo.tpot_ms;
}

Metrics summarize(std::span<const Request> reqs, std::span<const Outcome> outs, const Slo& slo) {
  if (reqs.size() != outs.size()) throw std::invalid_argument("one outcome per request");
  Metrics m;
  m.requests = reqs.size();
  if (reqs.empty()) return m;
  std::vector<double> ttft, tpot, e2e, gap;
  std::uint64_t good_tokens = 0;
  double first_arrival = reqs.front().arrival_ms, last_finish = first_arrival;
  for (std::size_t i = 0; i < reqs.size(); ++i) {
    const Request& r = reqs[i];
    const Outcome& o = outs[i];
    first_arrival = std::min(first_arrival, r.arrival_ms);
    if (!o.served) {
      ++m.shed;
      continue;
    }
    ++m.completed;
    last_finish = std::max(last_finish, o.finish_ms);
    m.output_tokens += r.output_tokens;
    m.prompt_tokens += r.prompt_tokens;
    m.cached_tokens += o.cached_tokens;
    ttft.push_back(ttft_ms(r, o));
    if (r.output_tokens > 1) tpot.push_back(tpot_ms(r, o));
    e2e.push_back(e2e_ms(r, o));
    gap.push_back(o.worst_gap_ms);
    if (meets_slo(r, o, slo)) {
      ++m.slo_met;
      good_tokens += r.output_tokens;
    }
  }
  m.makespan_ms = last_finish - first_arrival;
  if (m.makespan_ms > 0) {
    m.throughput_tok_s = static_cast<double>(m.output_tokens) / m.makespan_ms * 1000.0;
    m.goodput_tok_s = static_cast<double>(good_tokens) / m.makespan_ms * 1000.0;
  }
  auto pct = [](const std::vector<double>& xs, double p) {
    return xs.empty() ? 0.0 : gpulab::percentile(xs, p);
  };
  m.ttft_p50 = pct(ttft, 50);
  m.ttft_p99 = pct(ttft, 99);
  m.tpot_p50 = pct(tpot, 50);
  m.tpot_p99 = pct(tpot, 99);
  m.e2e_p50 = pct(e2e, 50);
  m.e2e_p99 = pct(e2e, 99);
  m.worst_gap_p99 = pct(gap, 99);
  return m;
}

}  // namespace batching
