#include "simt/latency_hiding.hpp"

#include <algorithm>

#include "simt/kernels.hpp"

namespace simt {

double latency_model_pct(int warps, double other_per_load, int load_latency) {
  const double busy = 1.0 + other_per_load;
  return 100.0 * std::min(1.0, warps * busy / (busy + load_latency));
}

std::string_view policy_name(SchedulingPolicy policy) {
  return policy == SchedulingPolicy::kGreedy ? "greedy" : "round-robin";
}

LatencyExperiment run_latency_hiding(const Config& base, const std::vector<int>& warp_counts) {
  const Program program = load_builtin("latency.simt");
  LatencyExperiment e;
  e.load_latency = base.load_latency;
  e.policy = base.policy;
  for (int warps : warp_counts) {
    Config c = base;
    c.warps = warps;
    LatencyRow row;
    row.warps = warps;
    row.stats = run(program, c).stats;
    if (e.rows.empty() && row.stats.loads > 0)  // C from the one-warp run: issues that are not loads, per load
      e.other_per_load = static_cast<double>(row.stats.issues - row.stats.loads) / static_cast<double>(row.stats.loads);
    e.rows.push_back(row);
  }
  for (auto& row : e.rows) row.model_pct = latency_model_pct(row.warps, e.other_per_load, e.load_latency);
  return e;
}

}  // namespace simt
