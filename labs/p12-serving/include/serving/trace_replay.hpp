// Replays a trace through an Engine in this process, on the wall clock: each
// request is submitted once its arrival time has passed (a request that finds
// the queue full waits on the client side, its clock already running), and
// every step is timed with its shape. What it records is what a client of the
// engine would see, without HTTP in between: the measured side of
// compare-sim and batching-sweep, and the step times batching-sim is
// calibrated from.
#pragma once

#include <cstddef>
#include <vector>

#include "batching/request.hpp"
#include "serving/cost_fit.hpp"
#include "serving/engine.hpp"
#include "serving/trace_workload.hpp"

namespace serving {

struct ReplayResult {
  // One per request, in P07's terms (milliseconds since the replay began, as
  // the requests' arrival_ms): batching::summarize reads them as it reads a simulation.
  std::vector<batching::Outcome> outcomes;
  std::vector<StepSample> steps;
  EngineStats stats;  // the engine's counters at the end
  double seconds = 0;
};

// Greedy decoding of exactly each request's output_tokens (shape_trace keeps
// every prompt + output inside the context). Throws std::runtime_error when
// the engine refuses a request for anything but a full queue.
ReplayResult replay_trace(Engine& engine, const TraceWorkload& workload);

}  // namespace serving
