// BatchPolicy's rules, and the simulator running them: with the budget
// holding the decodes (the serving engine's way) prompts get only what the
// decodes leave, so they take more iterations than with P07's prefill chunk.
#include "batching/batch_policy.hpp"

#include <gtest/gtest.h>

#include <vector>

#include "batching/continuous_batching.hpp"

namespace {

using batching::BatchPolicy;

TEST(BatchPolicy, SlotsDecodesAndChunks) {
  const BatchPolicy p07{4, 10, false}, engine{4, 10, true};
  EXPECT_TRUE(p07.has_slot(3));
  EXPECT_FALSE(p07.has_slot(4));
  EXPECT_EQ(p07.decode_rows(7), 7u);
  EXPECT_EQ(p07.prompt_budget(7), 10u) << "P07's chunk is prompt tokens beside the decodes";
  EXPECT_EQ(engine.decode_rows(7), 7u);
  EXPECT_EQ(engine.prompt_budget(7), 3u) << "the engine's budget holds its decodes first";
  EXPECT_EQ(engine.decode_rows(12), 10u);
  EXPECT_EQ(engine.prompt_budget(12), 0u);
  std::size_t budget = 5;
  EXPECT_EQ(BatchPolicy::take_chunk(3, budget), 3u);
  EXPECT_EQ(budget, 2u);
  EXPECT_EQ(BatchPolicy::take_chunk(9, budget), 2u);
  EXPECT_EQ(budget, 0u);
  EXPECT_FALSE(BatchPolicy{}.chunked());
}

TEST(BatchPolicy, ABudgetHoldingTheDecodesDelaysTheNextPrompt) {
  // One long-running decode, then a 12-token prompt; a budget of 4 per step.
  const std::vector<batching::Request> reqs{{0, 1, 40}, {1, 12, 2}};
  const batching::CostModel cost{1.0, 0.0, 0.0};  // every iteration 1 ms, prefill free
  batching::ContinuousOptions o;
  o.max_batch = 4;
  o.prefill_chunk = 4;
  const auto beside = batching::simulate_continuous(reqs, o, cost);
  o.budget_counts_decodes = true;
  const auto holding = batching::simulate_continuous(reqs, o, cost);
  // Beside: 4 prompt tokens a step, 3 steps. Holding: the decode takes 1 of 4, 3 a step, 4 steps.
  EXPECT_DOUBLE_EQ(holding[1].first_token_ms - beside[1].first_token_ms, 1.0);
  EXPECT_DOUBLE_EQ(holding[0].finish_ms, beside[0].finish_ms) << "the decode is never held back";
}

}  // namespace
