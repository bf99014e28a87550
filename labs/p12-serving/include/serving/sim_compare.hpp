// gpulab-serve compare-sim: the loop closed. One trace replayed
// through the engine (in process, on the wall clock), batching-sim's cost
// model fitted to the engine's measured step times, the same trace through
// P07's simulate_continuous with that model, and the two side by side with
// the error of each prediction.
#pragma once

#include <string>

#include "batching/engine_kv.hpp"
#include "batching/metrics.hpp"
#include "serving/cost_fit.hpp"
#include "serving/model_loading.hpp"
#include "serving/trace_replay.hpp"

namespace serving {

struct SideBySide {
  ReplayResult run;
  batching::Metrics measured;
  Calibration calibration;
  // batching-sim with the engine-form fit: every decode iteration costs
  // base + per_decode_row x max_batch (P07 pads a decode step to the configured width).
  batching::Metrics padded;
  // batching-sim with its own form fitted: one iteration cost whatever the width.
  batching::Metrics fitted;
  batching::EngineKvStats sim_kv;  // what `fitted`'s KV did: preemptions, prefix tokens skipped
  // `fitted` with unlimited KV and no prefix cache, as compare-sim first ran it.
  batching::Metrics fitted_unlimited_kv;
};

// The engine's options set batching-sim's: max_batch = max_running,
// prefill_chunk = max_batched_tokens with the decodes counted in it (the
// engine's BatchPolicy), and the engine's KV (batching::EngineKv: the same
// pool and block size, blocks on demand, preemption by recompute, the prefix
// cache when the engine has it on); `fitted_unlimited_kv` drops the KV model. Throws
// gpulab::UsageError for a static-batching engine (batching-sim's static model waits for a whole
// batch to arrive, the engine does not) and gpulab::RunError when the steps
// cannot be fitted.
SideBySide compare_with_sim(Engine& engine, const TraceWorkload& workload,
                            const batching::Slo& slo);

// (predicted - measured) / measured, in percent; NaN when measured is 0.
double error_percent(double predicted, double measured);

struct CompareSimOptions {
  ModelChoice choice;
  EngineOptions engine;
  std::string trace;
  TraceShaping shaping;
  batching::Slo slo;
  bool json = false;
};
int run_compare_sim(const CompareSimOptions& options);

}  // namespace serving
