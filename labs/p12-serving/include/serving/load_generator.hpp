// gpulab-serve loadgen: replays a P07 trace (the plain arrival_ms,prompt,output
// layout or the Azure CSV, read by batching::load_trace) against a running
// server over HTTP, each request streamed so the client sees its own TTFT and
// inter-token gaps, and summarises with P07's metrics (TTFT/TPOT p50/p99,
// throughput, goodput under an SLO) so the numbers sit beside batching-sim's.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "batching/metrics.hpp"
#include "serving/trace_workload.hpp"

namespace serving {

struct LoadOptions {
  std::string url = "http://127.0.0.1:8000";
  std::string trace;              // CSV file
  TraceShaping shaping;
  batching::Slo slo;
  bool json = false;
};

// Prints the summary; exit code 1 when a request failed outright (not a 429).
int run_loadgen(const LoadOptions& options);

}  // namespace serving
