// Extension 4: why GPUs keep many warps resident. LD makes a warp wait; the
// scheduler issues from any other eligible warp meanwhile. With W warps and C
// other instructions per load of latency L, the issue slot is busy
//     min(1, W * (1 + C) / (1 + C + L))
// of the time — until the warps fall into lockstep, which round-robin does.
#pragma once

#include <vector>

#include "simt/machine.hpp"

namespace simt {

struct LatencyRow {
  int warps = 0;
  RunStats stats;
  double model_pct = 0;  // the formula above
};

struct LatencyExperiment {
  int load_latency = 0;
  double other_per_load = 0;  // C, measured from the one-warp run
  SchedulingPolicy policy = SchedulingPolicy::kGreedy;
  std::vector<LatencyRow> rows;
};

double latency_model_pct(int warps, double other_per_load, int load_latency);

// Runs kernels/latency.simt with each warp count under `base`'s policy and latency.
LatencyExperiment run_latency_hiding(const Config& base, const std::vector<int>& warp_counts = {1, 2, 4, 8});

std::string_view policy_name(SchedulingPolicy policy);

}  // namespace simt
