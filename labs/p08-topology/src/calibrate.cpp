#include "topology/calibrate.hpp"

#include <stdexcept>

#include "ring_allreduce/experiments.hpp"

namespace topo {

std::vector<Sample> measure_loopback_ring(int world, const std::vector<double>& sizes_bytes, int iters, int warmup) {
  ring::TimingSpec spec;
  for (double b : sizes_bytes) spec.sizes_bytes.push_back(static_cast<std::size_t>(b));
  spec.algos = {ring::Algo::kRing};
  spec.iters = iters;
  spec.warmup = warmup;
  ring::LaunchOptions opts;
  opts.world = world;
  opts.timeout = std::chrono::milliseconds(30'000);
  const auto rows = ring::fold_timing(ring::launch_local(opts, ring::timing_job(spec)), world);
  std::vector<Sample> out;
  for (const auto& r : rows) {
    if (r.wrong != 0) throw std::runtime_error("the ring all-reduce produced wrong sums during calibration");
    out.push_back({static_cast<double>(r.bytes), r.seconds});
  }
  return out;
}

}  // namespace topo
