// The measured side of compare-sim and batching-sweep (a trace replayed
// through the engine on the wall clock) and the comparison itself, on the
// tiny model: every request gets its tokens, the step records add up to the
// work done, and batching-sim runs on the fitted costs.
#include "serving/sim_compare.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "batching/continuous_batching.hpp"
#include "batching/engine_kv.hpp"
#include "gpulab/errors.hpp"
#include "serving/trace_replay.hpp"
#include "serving/trace_workload.hpp"
#include "test_support.hpp"

namespace {

using namespace serving;

// Twelve requests arriving 3 ms apart, prompts 9..42 tokens, outputs 2..9.
TraceWorkload small_workload() {
  std::vector<batching::Request> trace;
  for (std::uint32_t i = 0; i < 12; ++i) trace.push_back({3.0 * i, 9 + 3 * i, 2 + (i * 5) % 8});
  return shape_trace(trace, TraceShaping{}, serving_test::tiny().max_context, "test");
}

EngineOptions small_engine() {
  EngineOptions o;
  o.max_running = 4;
  o.max_batched_tokens = 24;
  o.prefix_cache = false;
  return o;
}

TEST(TraceReplay, EveryRequestGetsItsTokensAndTheStepsAddUpToTheWork) {
  const TraceWorkload w = small_workload();
  Engine engine(serving_test::tiny_model("fast"), small_engine());
  const ReplayResult r = replay_trace(engine, w);
  ASSERT_EQ(r.outcomes.size(), w.requests.size());
  double prompt = 0, decode = 0, prefill = 0, rows = 0;
  for (std::size_t i = 0; i < w.requests.size(); ++i) {
    const auto& o = r.outcomes[i];
    EXPECT_TRUE(o.served) << i;
    EXPECT_GE(o.first_token_ms, w.requests[i].arrival_ms) << i;
    EXPECT_GE(o.finish_ms, o.first_token_ms) << i;
    prompt += w.requests[i].prompt_tokens;
    decode +=
        w.requests[i].output_tokens - 1;  // the first token comes out of the prompt's last row
  }
  for (const StepSample& s : r.steps) {
    prefill += s.prefill_tokens;
    rows += s.decode_rows;
    EXPECT_LE(s.decode_rows + s.prefill_tokens, 24) << "a step stays inside the token budget";
    EXPECT_GE(s.ms, 0);
  }
  EXPECT_EQ(r.stats.preemptions, 0u);
  EXPECT_EQ(prefill, prompt);
  EXPECT_EQ(rows, decode);
  EXPECT_EQ(r.steps.size(), r.stats.steps);
}

TEST(SimCompare, RunsBatchingSimOnTheFittedCostsBesideTheMeasuredRun) {
  const TraceWorkload w = small_workload();
  Engine engine(serving_test::tiny_model("fast"), small_engine());
  const SideBySide s = compare_with_sim(engine, w, batching::Slo{});
  EXPECT_EQ(s.measured.completed, w.requests.size());
  EXPECT_EQ(s.padded.completed, w.requests.size());
  EXPECT_EQ(s.fitted.completed, w.requests.size());
  EXPECT_EQ(s.calibration.engine.samples, s.run.steps.size());
  for (double v : s.calibration.engine.coef) EXPECT_GE(v, 0);
  // The fitted run is batching-sim's own answer for that cost model and these engine options,
  // KV included (the engine's pool, block size and prefix-cache setting).
  batching::ContinuousOptions co;
  co.max_batch = 4;
  co.prefill_chunk = 24;
  co.budget_counts_decodes = true;
  batching::EngineKv kv(1024, 16, false);
  co.engine_kv = &kv;
  const auto again = batching::summarize(
      w.requests, batching::simulate_continuous(w.requests, co, s.calibration.sim_model),
      batching::Slo{});
  EXPECT_DOUBLE_EQ(again.ttft_p99, s.fitted.ttft_p99);
  EXPECT_DOUBLE_EQ(again.throughput_tok_s, s.fitted.throughput_tok_s);
  co.engine_kv = nullptr;
  const auto unlimited = batching::summarize(
      w.requests, batching::simulate_continuous(w.requests, co, s.calibration.sim_model),
      batching::Slo{});
  EXPECT_DOUBLE_EQ(unlimited.ttft_p99, s.fitted_unlimited_kv.ttft_p99);
  EXPECT_GT(s.measured.throughput_tok_s, 0);
  EXPECT_GT(s.fitted.tpot_p50, 0);
}

TEST(SimCompare, TheSimulatorPreemptsWhereTheEnginesPoolRunsDry) {
  // Eight requests of 40 + 60 tokens at once, four at a time, in the smallest pool
  // the tiny model allows (16 blocks of 16 = one 256-token context): 4 x 7 blocks do not fit.
  std::vector<batching::Request> trace(8, batching::Request{0, 40, 60});
  const TraceWorkload w = shape_trace(trace, TraceShaping{}, serving_test::tiny().max_context, "t");
  EngineOptions o = small_engine();
  o.kv_blocks = 16;
  Engine engine(serving_test::tiny_model("fast"), o);
  const SideBySide s = compare_with_sim(engine, w, batching::Slo{});
  EXPECT_GT(s.run.stats.preemptions, 0u);
  EXPECT_GT(s.sim_kv.preemptions, 0u);
  EXPECT_EQ(s.fitted.completed, w.requests.size());
  EXPECT_EQ(s.padded.completed, w.requests.size());
}

TEST(SimCompare, TheSimulatorSkipsTheSharedPrefixTheEngineCaches) {
  // Six requests 200 ms apart (room for a loaded machine) behind the same
  // 64-token prefix: each finds it computed.
  std::vector<batching::Request> trace;
  for (std::uint32_t i = 0; i < 6; ++i) trace.push_back({200.0 * i, 20, 3});
  TraceShaping sh;
  sh.shared_prefix = 64;
  const TraceWorkload w = shape_trace(trace, sh, serving_test::tiny().max_context, "t");
  EngineOptions o = small_engine();
  o.prefix_cache = true;
  Engine engine(serving_test::tiny_model("fast"), o);
  const SideBySide s = compare_with_sim(engine, w, batching::Slo{});
  EXPECT_EQ(s.run.stats.prefix_tokens_skipped, 5u * 64);
  EXPECT_EQ(s.sim_kv.skipped_tokens, 5u * 64);
}

TEST(SimCompare, StaticBatchingHasNoSimulatorCounterpart) {
  EngineOptions o = small_engine();
  o.static_batching = true;
  Engine engine(serving_test::tiny_model("fast"), o);
  EXPECT_THROW((void)compare_with_sim(engine, small_workload(), batching::Slo{}),
               gpulab::UsageError);
}

TEST(SimCompare, ErrorIsRelativeToTheMeasurement) {
  EXPECT_DOUBLE_EQ(error_percent(110, 100), 10);
  EXPECT_DOUBLE_EQ(error_percent(50, 100), -50);
  EXPECT_TRUE(std::isnan(error_percent(1, 0)));
}

TEST(TraceWorkload, ClipsToTheContextCompressesArrivalsAndSharesThePrefix) {
  std::vector<batching::Request> trace{{100, 10, 5}, {300, 900, 400}, {500, 50, 50}};
  TraceShaping s;
  s.speed = 2;
  s.shared_prefix = 16;
  s.max_output = 20;
  s.max_prompt = 40;
  const TraceWorkload w = shape_trace(trace, s, 256, "t.csv");
  ASSERT_EQ(w.requests.size(), 3u);
  EXPECT_EQ(w.requests[0].arrival_ms, 50);
  EXPECT_EQ(w.requests[2].arrival_ms, 250);
  EXPECT_EQ(w.requests[0].prompt_tokens, 16u + 10);
  EXPECT_EQ(w.requests[1].prompt_tokens, 16u + 40) << "--max-prompt caps the request's own tokens";
  EXPECT_EQ(w.requests[1].output_tokens, 20u);
  EXPECT_EQ(w.requests[0].output_tokens, 5u);
  EXPECT_EQ(w.clipped, 2u);
  for (std::size_t i = 0; i < 3; ++i) {
    ASSERT_EQ(w.prompts[i].size(), w.requests[i].prompt_tokens);
    EXPECT_TRUE(std::equal(w.prompts[0].begin(), w.prompts[0].begin() + 16, w.prompts[i].begin()));
  }
  s.speed = 0;
  EXPECT_THROW(shape_trace(trace, s, 256, "t.csv"), gpulab::UsageError);
  s.speed = 1;
  s.shared_prefix = 253;
  EXPECT_THROW(shape_trace(trace, s, 256, "t.csv"), gpulab::UsageError);
}

}  // namespace
