// The continuous-batching policy: admission into free sequence slots, oldest
// first; decode first (every generating sequence's token is in a step before
// any prompt token); chunked prefill of the prompts in the batch, in batch
// order, under a per-step token budget. simulate_continuous runs it on
// simulated time and P12's serving engine runs it on a real model; each keeps
// its own state (slots here, block tables and preemption there), and both
// take these rules from this one object.
#pragma once

#include <algorithm>
#include <cstddef>

namespace batching {

struct BatchPolicy {
  std::size_t max_batch = 16;  // sequences in a batch
  // Tokens a step may carry for prompt chunks; 0: no chunking (whole prompts in a
  // separate prefill step, the simulator only).
  std::size_t token_budget = 0;
  // Whether the budget holds the step's decode rows too (the serving engine's
  // max_batched_tokens, as vLLM's max_num_batched_tokens) or only the prompt
  // tokens beside them (P07's prefill chunk, as Sarathi-Serve's).
  bool budget_counts_decodes = false;

  [[nodiscard]] bool chunked() const { return token_budget > 0; }
  // One more sequence fits beside `in_batch` already running or admitted.
  [[nodiscard]] bool has_slot(std::size_t in_batch) const { return in_batch < max_batch; }
  // Of `generating` sequences, how many decode this step: all of them, unless
  // the budget holds decodes and is smaller (then the oldest).
  [[nodiscard]] std::size_t decode_rows(std::size_t generating) const {
    return budget_counts_decodes ? std::min(generating, token_budget) : generating;
  }
  // The prompt tokens a step may still carry once `decodes` decode rows are in it.
  [[nodiscard]] std::size_t prompt_budget(std::size_t decodes) const {
    return budget_counts_decodes ? token_budget - std::min(decodes, token_budget) : token_budget;
  }
  // The next prompt's chunk: up to `pending` of its tokens out of `budget`, which it spends.
  static std::size_t take_chunk(std::size_t pending, std::size_t& budget) {
    const std::size_t take = std::min(pending, budget);
    budget -= take;
    return take;
  }
};

}  // namespace batching
