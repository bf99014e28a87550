// Serving metrics over one simulation: latency percentiles, throughput, and
// goodput — output tokens of requests that met *both* latency SLOs, over the
// same wall time as throughput (so goodput <= throughput always).
#pragma once

#include <cstddef>
#include <span>

#include "batching/request.hpp"

namespace batching {

struct Slo {
  double ttft_ms = 300;  // met when TTFT < this
  double tpot_ms = 40;   // met when TPOT < this
};

struct Metrics {
  std::size_t requests = 0;
  std::size_t completed = 0;
  std::size_t shed = 0;     // not served (admission control)
  std::size_t slo_met = 0;  // completed and met both SLOs
  double makespan_ms = 0;   // first arrival to last finish
  double throughput_tok_s = 0;
  double goodput_tok_s = 0;
  double ttft_p50 = 0, ttft_p99 = 0;
  double tpot_p50 = 0, tpot_p99 = 0;
  double e2e_p50 = 0, e2e_p99 = 0;
  double worst_gap_p99 = 0;  // p99 over requests of their longest inter-token gap
  std::uint64_t output_tokens = 0;
  std::uint64_t prompt_tokens = 0;
  std::uint64_t cached_tokens = 0;
};

// Percentiles interpolate linearly between ranks (gpulab::percentile).
Metrics summarize(std::span<const Request> reqs, std::span<const Outcome> outs, const Slo& slo);
[[nodiscard]] bool meets_slo(const Request& r, const Outcome& o, const Slo& slo);

}  // namespace batching
