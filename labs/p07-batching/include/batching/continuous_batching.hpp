// Continuous (iteration-level) batching, Orca-style: every iteration retires
// finished sequences and admits waiting ones into the freed slots.
//
// Without chunking, the prompts admitted in an iteration are prefilled in one
// step before the decode step, so a long prompt stalls every running decode.
// With a prefill chunk of N tokens (Sarathi-Serve), each iteration carries at
// most N prompt tokens alongside the decodes, and a long prompt is spread over
// several iterations. The rules of admission, decode first and chunking are
// BatchPolicy's (batch_policy.hpp), shared with P12's serving engine.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "batching/batch_policy.hpp"
#include "batching/cost_model.hpp"
#include "batching/engine_kv.hpp"
#include "batching/kv_model.hpp"
#include "batching/request.hpp"

namespace batching {

struct ContinuousOptions {
  std::size_t max_batch = 16;
  std::size_t prefill_chunk = 0;  // 0: whole prompts in a separate step
  // The chunk budget holds the decode rows too (BatchPolicy::budget_counts_decodes):
  // how P12's serving engine spends its --max-batched-tokens.
  bool budget_counts_decodes = false;
  // SLO-aware admission: a queued request whose TTFT can no longer beat
  // shed_ttft_ms (time waited + its prefill) is rejected instead of served.
  bool shed_late = false;
  double shed_ttft_ms = 300;
  KvModel* kv = nullptr;  // nullptr: unlimited KV memory, no prefix reuse
  // KV the way P12's serving engine holds it (engine_kv.hpp): blocks taken as
  // tokens arrive, preemption by recompute when a decode finds the pool dry,
  // prefix hits only on computed blocks. Its decodes claim their blocks before
  // admission and, with chunking, admission stops when the step's token budget
  // is spent, both as in the engine. Exclusive with `kv`.
  EngineKv* engine_kv = nullptr;
};

std::vector<Outcome> simulate_continuous(std::span<const Request> reqs,
                                         const ContinuousOptions& opt, const CostModel& cost);

}  // namespace batching
