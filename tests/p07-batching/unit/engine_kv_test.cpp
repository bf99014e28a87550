// batching-sim holding KV the way P12's serving engine does (EngineKv): with
// room to spare it changes nothing; a tight pool preempts and recomputes but
// serves every token; the prefix cache reuses only computed blocks.
#include "batching/engine_kv.hpp"

#include <gtest/gtest.h>

#include <stdexcept>

#include "batching/continuous_batching.hpp"
#include "batching/kv_model.hpp"
#include "batching/metrics.hpp"
#include "batching/workload.hpp"

namespace batching {
namespace {

const CostModel kCost;  // 15 + 1 x B ms, 0.02 ms/prompt token
const Slo kSlo;

std::vector<Outcome> run(const std::vector<Request>& reqs, std::size_t chunk, EngineKv* kv,
                         std::size_t max_batch = 16) {
  ContinuousOptions o;
  o.max_batch = max_batch;
  o.prefill_chunk = chunk;
  o.budget_counts_decodes = chunk > 0;
  o.engine_kv = kv;
  return simulate_continuous(reqs, o, kCost);
}

class Chunking : public ::testing::TestWithParam<std::size_t> {};

TEST_P(Chunking, AmplePoolWithoutCacheChangesNothing) {
  const auto reqs = generate(WorkloadSpec{}, 3);
  EngineKv kv(1 << 16, 16, false);
  const auto with = run(reqs, GetParam(), &kv);
  const auto without = run(reqs, GetParam(), nullptr);
  ASSERT_EQ(with.size(), without.size());
  for (std::size_t i = 0; i < reqs.size(); ++i) {
    EXPECT_DOUBLE_EQ(with[i].first_token_ms, without[i].first_token_ms) << i;
    EXPECT_DOUBLE_EQ(with[i].finish_ms, without[i].finish_ms) << i;
  }
  EXPECT_EQ(kv.stats().preemptions, 0u);
}

TEST_P(Chunking, TightPoolPreemptsAndRecomputesButServesEveryToken) {
  WorkloadSpec w;
  w.requests = 120;
  w.rate_per_s = 20;  // a deep queue: many sequences grow at once
  const auto reqs = generate(w, 1);
  // 128 blocks x 16 = 2048 tokens: about two of these requests at full length.
  EngineKv kv(128, 16, false);
  const auto out = run(reqs, GetParam(), &kv);
  EXPECT_GT(kv.stats().preemptions, 0u);
  const Metrics tight = summarize(reqs, out, kSlo);
  EXPECT_EQ(tight.completed, reqs.size());
  for (std::size_t i = 0; i < reqs.size(); ++i) {
    ASSERT_TRUE(out[i].served) << i;
    EXPECT_GE(out[i].first_token_ms, reqs[i].arrival_ms) << i;
    EXPECT_GE(out[i].finish_ms, out[i].first_token_ms) << i;
  }
  // Recomputation and waiting for blocks cost time: the same load with room is faster.
  EngineKv ample(1 << 16, 16, false);
  const Metrics roomy = summarize(reqs, run(reqs, GetParam(), &ample), kSlo);
  EXPECT_GT(tight.makespan_ms, roomy.makespan_ms);
}

INSTANTIATE_TEST_SUITE_P(WholeAndChunked, Chunking, ::testing::Values(0, 256));

TEST(EngineKvSim, RejectsWhatCanNeverFitAndRefusesTwoKvModels) {
  std::vector<Request> reqs = {{0, 100, 20}, {0, 10'000, 10}};
  EngineKv kv(16, 16, false);  // 256 tokens
  const auto out = run(reqs, 64, &kv);
  EXPECT_TRUE(out[0].served);
  EXPECT_FALSE(out[1].served);
  PagedPrefixKv reserve(16, 16, false);
  ContinuousOptions o;
  o.kv = &reserve;
  o.engine_kv = &kv;
  EXPECT_THROW((void)simulate_continuous(reqs, o, kCost), std::invalid_argument);
}

TEST(EngineKvSim, PrefixHitsCountOnlyComputedBlocks) {
  // Three requests with the same 64-token system prompt: the first two are
  // admitted in the same step (a 96-token budget: 80 + 16), so the second finds
  // the prefix indexed but not yet computed; the third comes after both.
  std::vector<Request> reqs = {{0, 80, 4, 0, 64}, {0, 80, 4, 0, 64}, {10'000, 80, 4, 0, 64}};
  EngineKv kv(64, 16, true);
  const auto out = run(reqs, 96, &kv);
  EXPECT_EQ(out[0].cached_tokens, 0u);
  EXPECT_EQ(out[1].cached_tokens, 0u) << "its prefix was indexed but not computed yet";
  EXPECT_EQ(out[2].cached_tokens, 64u) << "4 full blocks of the system prompt, computed";
  EXPECT_EQ(kv.stats().skipped_tokens, 64u);
  EXPECT_GT(kv.stats().block_hits, 4u) << "the second request adopted indexed blocks too";
}

TEST(EngineKvUnit, HoldsOnDemandAndTracksComputedBlocks) {
  const Request r{0, 40, 10, 0, 32};
  EngineKv kv(4, 16, true);  // 64 tokens
  ASSERT_TRUE(kv.can_ever_fit(r));
  EXPECT_FALSE(kv.can_ever_fit(Request{0, 60, 10}));
  ASSERT_EQ(kv.admit(0, r, 40), 0u);  // 3 blocks
  EXPECT_TRUE(kv.hold(0, 48));        // still inside the third block
  EXPECT_TRUE(kv.hold(0, 49));        // the fourth
  EXPECT_FALSE(kv.admit(1, r, 40)) << "the pool is dry";
  kv.computed(0, 0, 40);
  kv.release(0);
  // The system prompt's 2 blocks are cached and computed; the third (tokens 32..47) is unique.
  EXPECT_EQ(kv.admit(1, r, 40), 32u);
  kv.preempt(1);
  EXPECT_EQ(kv.stats().preemptions, 1u);
  EXPECT_EQ(kv.stats().skipped_tokens, 32u);
}

}  // namespace
}  // namespace batching
