// Fitting the alpha-beta model to measurements: `topo-sim calibrate` times
// Lab 01's ring all-reduce on this machine and fits a "loopback" link.
#pragma once

#include <vector>

#include "topology/cost_model.hpp"

namespace topo {

struct Sample {
  double bytes = 0;
  double seconds = 0;
};

// Fits time = 2(N-1)*alpha + 2(N-1)/N * V / bandwidth to ring all-reduce
// samples by least squares on relative error (sizes span decades, so every
// point counts alike). A negative intercept is clamped to alpha = 0.
Link fit_ring_link(int world, const std::vector<Sample>& samples);

// Measures the ring all-reduce over loopback TCP with `world` processes for
// each size (Lab 01's code, not a model). Returns the slowest rank's mean time.
std::vector<Sample> measure_loopback_ring(int world, const std::vector<double>& sizes_bytes, int iters, int warmup);

}  // namespace topo
