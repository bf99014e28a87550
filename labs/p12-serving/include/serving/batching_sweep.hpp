// gpulab-serve batching-sweep: continuous against static batching at equal
// p99 TTFT. The same trace, compressed to ever higher arrival rates, through
// the same engine in each mode (--static-batching is the only difference);
// for each mode the highest rate whose measured p99 TTFT stays under the
// target, and the throughput there. The ratio of those throughputs is the
// issue's figure.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "serving/model_loading.hpp"
#include "serving/trace_workload.hpp"

namespace serving {

struct RateProbe {
  double speed = 0;
  double p99_ttft_ms = 0;
  bool sustained = false;  // p99 TTFT <= the target
};

struct RateSearch {
  std::vector<RateProbe> probes;  // in the order they ran
  std::optional<double>
      highest;          // the highest sustained speed found; none when even the lowest fails
  bool capped = false;  // the highest speed tried was sustained: the real limit may be higher
};

// Doubles the speed from `min_speed` while the target holds (up to
// `max_speed`), then bisects (geometrically) `refine` times between the last
// speed that held and the first that did not. A noisy measurement that holds
// above a failure is not trusted: the answer is below the first failure.
// Throws std::invalid_argument for speeds that are not 0 < min <= max.
RateSearch search_rate(const std::function<double(double speed)>& p99_ttft_at, double target_ms,
                       double min_speed, double max_speed, std::size_t refine);

struct SweepOptions {
  ModelChoice choice;
  EngineOptions engine;  // static_batching is set per mode
  std::string trace;
  TraceShaping shaping;  // its speed is what the sweep varies
  double ttft_p99_ms = 500;
  double min_speed = 1, max_speed = 64;
  std::size_t refine = 2;
  bool json = false;
};
int run_batching_sweep(const SweepOptions& options);

}  // namespace serving
