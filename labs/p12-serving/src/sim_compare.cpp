#include "serving/sim_compare.hpp"

#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "batching/continuous_batching.hpp"
#include "batching/engine_kv.hpp"
#include "batching/trace.hpp"
#include "gpulab/errors.hpp"
#include "gpulab/json.hpp"
#include "gpulab/table.hpp"

namespace serving {

double error_percent(double predicted, double measured) {
  return measured != 0 ? (predicted - measured) / measured * 100.0
                       : std::numeric_limits<double>::quiet_NaN();
}

namespace {

void check_simulable(const EngineOptions& eo) {
  if (eo.static_batching)
    throw gpulab::UsageError(
        "compare-sim: --static-batching has no batching-sim counterpart (its static model waits "
        "for a whole batch "
        "to arrive; the engine starts with what is queued)");
}

}  // namespace

SideBySide compare_with_sim(Engine& engine, const TraceWorkload& w, const batching::Slo& slo) {
  const EngineOptions& eo = engine.options();
  check_simulable(eo);
  SideBySide s;
  s.run = replay_trace(engine, w);
  s.measured = batching::summarize(w.requests, s.run.outcomes, slo);
  auto cal = calibrate(s.run.steps);
  if (!cal)
    throw gpulab::RunError("compare-sim: cannot fit the step times: " + cal.error().message);
  s.calibration = cal.value();
  batching::ContinuousOptions co;
  co.max_batch = eo.max_running;
  co.prefill_chunk = eo.max_batched_tokens;
  co.budget_counts_decodes = true;  // the engine's budget holds its decodes: the same BatchPolicy
  // The first comparison compare-sim printed: unlimited KV, no prefix cache.
  s.fitted_unlimited_kv = batching::summarize(
      w.requests, batching::simulate_continuous(w.requests, co, s.calibration.sim_model), slo);
  // Like with like: the engine's pool, block size and prefix cache, held the engine's way.
  auto run_with_engine_kv = [&](const batching::CostModel& cost,
                                batching::EngineKvStats* kv_stats) {
    batching::EngineKv kv(eo.kv_blocks, eo.block_size, eo.prefix_cache);
    co.engine_kv = &kv;
    auto m =
        batching::summarize(w.requests, batching::simulate_continuous(w.requests, co, cost), slo);
    co.engine_kv = nullptr;
    if (kv_stats) *kv_stats = kv.stats();
    return m;
  };
  s.padded = run_with_engine_kv(s.calibration.engine_model, nullptr);
  s.fitted = run_with_engine_kv(s.calibration.sim_model, &s.sim_kv);
  return s;
}

namespace {

gpulab::Json metrics_json(const batching::Metrics& m) {
  return {{"completed", m.completed},        {"ttft_p50_ms", m.ttft_p50},
          {"ttft_p99_ms", m.ttft_p99},       {"tpot_p50_ms", m.tpot_p50},
          {"tpot_p99_ms", m.tpot_p99},       {"throughput_tok_s", m.throughput_tok_s},
          {"goodput_tok_s", m.goodput_tok_s}};
}

gpulab::Json error_json(const batching::Metrics& p, const batching::Metrics& m) {
  auto e = [](double pred, double meas) -> gpulab::Json {
    const double v = error_percent(pred, meas);
    return std::isnan(v) ? gpulab::Json(nullptr) : gpulab::Json(v);
  };
  return {{"ttft_p50", e(p.ttft_p50, m.ttft_p50)},
          {"ttft_p99", e(p.ttft_p99, m.ttft_p99)},
          {"tpot_p50", e(p.tpot_p50, m.tpot_p50)},
          {"tpot_p99", e(p.tpot_p99, m.tpot_p99)},
          {"throughput", e(p.throughput_tok_s, m.throughput_tok_s)}};
}

std::string pct(double predicted, double measured) {
  const double v = error_percent(predicted, measured);
  return std::isnan(v) ? "n/a" : fmt::format("{:+.1f}%", v);
}

}  // namespace

int run_compare_sim(const CompareSimOptions& o) {
  check_simulable(o.engine);
  auto loaded = load_model(o.choice, o.engine);
  TraceWorkload w = shape_trace(batching::load_trace(o.trace), o.shaping,
                                loaded->config.max_context, o.trace.c_str());
  Engine engine(*loaded->model, o.engine);
  const SideBySide s = compare_with_sim(engine, w, o.slo);
  const auto& c = s.calibration;
  const std::string backend(loaded->model->backend().name());

  if (o.json) {
    gpulab::print_json(
        {{"model", describe(loaded->config)},
         {"backend", backend},
         {"requests", w.requests.size()},
         {"clipped", w.clipped},
         {"steps", s.run.steps.size()},
         {"seconds", s.run.seconds},
         {"preemptions", s.run.stats.preemptions},
         {"fit_engine_form",
          {{"base_ms", c.engine.coef[0]},
           {"per_decode_row_ms", c.engine.coef[1]},
           {"per_prefill_token_ms", c.engine.coef[2]},
           {"rms_ms", c.engine.rms_ms},
           {"r2", c.engine.r2}}},
         {"fit_sim_form",
          {{"iteration_ms", c.sim.coef[0]},
           {"per_prefill_token_ms", c.sim.coef[1]},
           {"rms_ms", c.sim.rms_ms},
           {"r2", c.sim.r2}}},
         {"measured", metrics_json(s.measured)},
         {"sim_padded", metrics_json(s.padded)},
         {"sim_padded_error_percent", error_json(s.padded, s.measured)},
         {"prefix_tokens_skipped", s.run.stats.prefix_tokens_skipped},
         {"sim_kv",
          {{"kv_blocks", o.engine.kv_blocks},
           {"block_size", o.engine.block_size},
           {"prefix_cache", o.engine.prefix_cache},
           {"preemptions", s.sim_kv.preemptions},
           {"prefix_tokens_skipped", s.sim_kv.skipped_tokens}}},
         {"sim_fitted", metrics_json(s.fitted)},
         {"sim_fitted_error_percent", error_json(s.fitted, s.measured)},
         {"sim_fitted_unlimited_kv", metrics_json(s.fitted_unlimited_kv)},
         {"sim_fitted_unlimited_kv_error_percent", error_json(s.fitted_unlimited_kv, s.measured)}});
    return gpulab::kExitOk;
  }
  fmt::print("model:   {}, matmuls on {}\n", describe(loaded->config), backend);
  fmt::print("trace:   {} requests of {} at {}x speed, {} clipped to the context or the caps\n",
             w.requests.size(), o.trace, o.shaping.speed, w.clipped);
  fmt::print(
      "engine:  max-running {}, max-batched-tokens {}: {} steps in {:.1f} s, {} preemptions, {} "
      "prompt tokens skipped\n",
      o.engine.max_running, o.engine.max_batched_tokens, s.run.steps.size(), s.run.seconds,
      s.run.stats.preemptions, s.run.stats.prefix_tokens_skipped);
  fmt::print(
      "sim kv:  the engine's {} blocks x {} tokens, prefix cache {}: {} preemptions, {} prompt "
      "tokens skipped (sim fit)\n",
      o.engine.kv_blocks, o.engine.block_size, o.engine.prefix_cache ? "on" : "off",
      s.sim_kv.preemptions, s.sim_kv.skipped_tokens);
  fmt::print(
      "fit:     step_ms = {:.3f} + {:.4f} x decode_rows + {:.4f} x prefill_tokens  (rms {:.2f} ms, "
      "R^2 {:.2f})\n",
      c.engine.coef[0], c.engine.coef[1], c.engine.coef[2], c.engine.rms_ms, c.engine.r2);
  fmt::print(
      "sim fit: step_ms = {:.3f} x [step decodes] + {:.4f} x prefill_tokens  (rms {:.2f} ms, R^2 "
      "{:.2f})\n",
      c.sim.coef[0], c.sim.coef[1], c.sim.rms_ms, c.sim.r2);
  gpulab::Table t;
  t.column("run", gpulab::Table::Align::kLeft);
  for (const char* h : {"ttft_p50_ms", "ttft_p99_ms", "tpot_p50_ms", "tpot_p99_ms", "tok/s"})
    t.column(h);
  auto row = [&](const char* name, const batching::Metrics& m) {
    t.row({name, fmt::format("{:.1f}", m.ttft_p50), fmt::format("{:.1f}", m.ttft_p99),
           fmt::format("{:.2f}", m.tpot_p50), fmt::format("{:.2f}", m.tpot_p99),
           fmt::format("{:.1f}", m.throughput_tok_s)});
  };
  auto error_row = [&](const batching::Metrics& p) {
    const auto& m = s.measured;
    t.row({"  error", pct(p.ttft_p50, m.ttft_p50), pct(p.ttft_p99, m.ttft_p99),
           pct(p.tpot_p50, m.tpot_p50), pct(p.tpot_p99, m.tpot_p99),
           pct(p.throughput_tok_s, m.throughput_tok_s)});
  };
  row("measured (engine)", s.measured);
  row("batching-sim, fit x max_batch", s.padded);
  error_row(s.padded);
  row("batching-sim, sim fit", s.fitted);
  error_row(s.fitted);
  row("sim fit, unlimited KV", s.fitted_unlimited_kv);
  error_row(s.fitted_unlimited_kv);
  fmt::print("{}", t.render());
  return gpulab::kExitOk;
}

}  // namespace serving
