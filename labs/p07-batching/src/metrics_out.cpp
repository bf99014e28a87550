#include "batching/metrics_out.hpp"

#include <fmt/format.h>

#include <stdexcept>

#include "gpulab/errors.hpp"
#include "gpulab/metrics_out.hpp"

namespace batching {

std::vector<double> latency_buckets_seconds() {
  return {0.01, 0.02, 0.04, 0.06, 0.1, 0.2, 0.3, 0.5, 1, 2, 5, 10, 30, 60, 120};
}

void ServingMetrics::add_run(const std::string& policy, std::span<const Request> reqs,
                             std::span<const Outcome> outs, const Slo& slo) {
  if (reqs.size() != outs.size()) throw std::invalid_argument("one outcome per request");
  const gpulab::prom::Labels labels{{"policy", policy}};
  auto& ttft = e_.histogram("serving_ttft_seconds",
                            "Time to first token of served requests (queueing + prefill).",
                            latency_buckets_seconds());
  auto& tpot = e_.histogram("serving_tpot_seconds",
                            "Time per output token after the first, per served request.",
                            latency_buckets_seconds());
  auto& all = e_.counter("serving_requests_total", "Requests offered, served or shed.");
  auto& good = e_.counter("serving_good_requests_total",
                          "Requests served within both the TTFT and the TPOT SLO.");
  // Every policy gets its series even when it served nothing.
  std::vector<double> zeros(latency_buckets_seconds().size() + 1, 0.0);
  ttft.set_histogram(labels, zeros, 0);
  tpot.set_histogram(labels, zeros, 0);
  all.set(labels, 0);
  good.set(labels, 0);
  for (std::size_t i = 0; i < reqs.size(); ++i) {
    all.inc(labels);
    if (!outs[i].served) continue;
    ttft.observe(labels, ttft_ms(reqs[i], outs[i]) / 1000.0);
    if (reqs[i].output_tokens > 1) tpot.observe(labels, tpot_ms(reqs[i], outs[i]) / 1000.0);
    if (meets_slo(reqs[i], outs[i], slo)) good.inc(labels);
  }
}

void ServingMetrics::add_prefix_cache(const std::string& policy, const PrefixKvStats& stats) {
  const double ratio = stats.block_lookups == 0 ? 0.0
                                                : static_cast<double>(stats.block_hits) /
                                                      static_cast<double>(stats.block_lookups);
  e_.gauge("kv_cache_prefix_hit_ratio",
           "Prompt blocks found in the prefix cache / blocks looked up.")
      .set({{"policy", policy}}, ratio);
}

void ServingMetrics::write(const std::filesystem::path& path) const {
  gpulab::write_metrics_out(path, e_);
}

}  // namespace batching
