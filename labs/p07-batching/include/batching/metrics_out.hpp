// `batching-sim --metrics-out FILE`: what each simulated policy served, as the
// platform's serving metrics in the Prometheus text format (the names
// gpu-exporter --textfile-dir re-exposes and labs/p10-exporter/slo alerts on):
//   serving_ttft_seconds, serving_tpot_seconds   histograms of served requests
//   serving_requests_total                       every request offered (shed ones too)
//   serving_good_requests_total                  served within both SLOs (goodput = good / all)
//   kv_cache_prefix_hit_ratio                    prefix-cache block hits / lookups (prefix-cache)
// One series per policy, label policy="<slug>".
#pragma once

#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "batching/kv_model.hpp"
#include "batching/metrics.hpp"
#include "batching/request.hpp"
#include "gpulab/prom_text.hpp"

namespace batching {

// Bucket bounds in seconds for both latency histograms. They include the SLO
// thresholds 0.04 (TPOT) and 0.3 (TTFT) exactly, so an SLI is one bucket over
// the count. Prometheus buckets are "<=": a latency of exactly 300 ms lands in
// le="0.3" although the SLO (TTFT < 300 ms) calls it a miss.
[[nodiscard]] std::vector<double> latency_buckets_seconds();

class ServingMetrics {
 public:
  // Adds one simulated run: TTFT and TPOT of every served request (TPOT only
  // for outputs longer than one token, the others have no decode), the
  // requests offered and the ones that met both SLOs.
  void add_run(const std::string& policy, std::span<const Request> reqs,
               std::span<const Outcome> outs, const Slo& slo);
  // Adds the prefix cache's block hit ratio of that run (0 when nothing was looked up).
  void add_prefix_cache(const std::string& policy, const PrefixKvStats& stats);

  [[nodiscard]] const gpulab::prom::Exposition& exposition() const { return e_; }
  // Atomic write (temp file + rename); an unwritable path is a gpulab::UsageError (exit 2).
  void write(const std::filesystem::path& path) const;

 private:
  gpulab::prom::Exposition e_;
};

}  // namespace batching
