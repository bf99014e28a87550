#include <gtest/gtest.h>

#include <algorithm>

#include "batching/continuous_batching.hpp"
#include "batching/disaggregation.hpp"
#include "batching/kv_model.hpp"
#include "batching/metrics.hpp"
#include "batching/static_batching.hpp"
#include "batching/workload.hpp"

namespace batching {
namespace {

const CostModel kCost;  // 15 + 1 x B ms, 0.02 ms/prompt token
const Slo kSlo;         // TTFT < 300 ms, TPOT < 40 ms

Metrics continuous(const std::vector<Request>& reqs, std::size_t b, std::size_t chunk = 0) {
  ContinuousOptions o;
  o.max_batch = b;
  o.prefill_chunk = chunk;
  return summarize(reqs, simulate_continuous(reqs, o, kCost), kSlo);
}

class DefaultWorkload : public ::testing::TestWithParam<std::uint64_t> {
 protected:
  std::vector<Request> reqs = generate(WorkloadSpec{}, GetParam());
};

TEST_P(DefaultWorkload, GoodputNeverExceedsThroughput) {
  for (std::size_t b : {4, 8, 16, 32, 64}) {
    const Metrics m = continuous(reqs, b);
    EXPECT_LE(m.goodput_tok_s, m.throughput_tok_s) << "max_batch " << b;
    EXPECT_EQ(m.completed, reqs.size());
  }
}

TEST_P(DefaultWorkload, BlownTpotSloMeansZeroGoodput) {
  EXPECT_EQ(continuous(reqs, 32).goodput_tok_s, 0.0);  // 47 ms iterations
  EXPECT_EQ(continuous(reqs, 64).goodput_tok_s, 0.0);  // 79 ms iterations
}

TEST_P(DefaultWorkload, GoodputPeaksAtAnInteriorDepth) {
  const double g8 = continuous(reqs, 8).goodput_tok_s, g16 = continuous(reqs, 16).goodput_tok_s;
  EXPECT_GT(g16, g8);
  EXPECT_GT(g16, continuous(reqs, 4).goodput_tok_s);
  EXPECT_GT(g16, continuous(reqs, 32).goodput_tok_s);
  EXPECT_GT(g16, 0.5 * continuous(reqs, 16).throughput_tok_s);
}

TEST_P(DefaultWorkload, TpotGrowsWithBatchWidth) {
  double previous = 0;
  for (std::size_t b : {4, 8, 16, 32, 64}) {
    const Metrics m = continuous(reqs, b);
    EXPECT_GE(m.tpot_p50, previous) << "max_batch " << b;
    EXPECT_GE(m.tpot_p50, kCost.iteration_ms(b));  // an iteration is the floor
    previous = m.tpot_p50;
  }
}

TEST_P(DefaultWorkload, SmallBatchSaturatesAtItsCeiling) {
  const double ceiling = 4 / kCost.iteration_ms(4) * 1000;  // 210.5 tok/s
  EXPECT_NEAR(continuous(reqs, 4).throughput_tok_s, ceiling, 0.03 * ceiling);
}

TEST_P(DefaultWorkload, ContinuousBeatsStatic) {
  const Metrics st = summarize(reqs, simulate_static(reqs, 16, kCost), kSlo);
  const Metrics co = continuous(reqs, 16);
  EXPECT_GE(co.throughput_tok_s, 1.2 * st.throughput_tok_s);
  EXPECT_GE(st.ttft_p99, 10 * co.ttft_p99);  // an order of magnitude
}

INSTANTIATE_TEST_SUITE_P(Seeds, DefaultWorkload, ::testing::Values(1, 2, 3));

TEST(Static, BatchWaitsForItsLastMemberAndItsLongestMember) {
  std::vector<Request> reqs = {{0, 100, 10}, {50, 100, 30}, {60, 100, 5}, {70, 100, 5}};
  const auto out = simulate_static(reqs, 2, kCost);
  const double iter = kCost.iteration_ms(2);
  // Batch 1 forms at t=50 (formation delay), prefill 200 tokens = 4 ms.
  EXPECT_DOUBLE_EQ(out[0].first_token_ms, 54);
  EXPECT_DOUBLE_EQ(out[1].first_token_ms, 54);
  EXPECT_DOUBLE_EQ(out[0].finish_ms, 54 + 9 * iter);
  // Batch 2 waits for batch 1's longest member (head-of-line blocking).
  EXPECT_DOUBLE_EQ(out[2].first_token_ms, 54 + 29 * iter + 4);
}

TEST(Continuous, LongPrefillStallsRunningDecodes) {
  // One request is decoding when a 10,000-token prompt arrives: its prefill
  // (200 ms) sits between two of the first request's tokens.
  std::vector<Request> reqs = {{0, 10, 50}, {100, 10'000, 5}};
  ContinuousOptions o;
  o.max_batch = 4;
  const auto out = simulate_continuous(reqs, o, kCost);
  EXPECT_GE(out[0].worst_gap_ms, 200 + kCost.iteration_ms(4) - 1e-9);
  o.prefill_chunk = 512;  // chunking bounds the stall
  const auto chunked = simulate_continuous(reqs, o, kCost);
  EXPECT_LE(chunked[0].worst_gap_ms, kCost.iteration_ms(4) + kCost.prefill_ms(512) + 1e-9);
  EXPECT_TRUE(chunked[1].served);
}

TEST(Continuous, AdmitsIntoSlotsFreedByFinishedRequests) {
  std::vector<Request> reqs = {{0, 10, 2}, {0, 10, 50}, {1, 10, 3}};
  ContinuousOptions o;
  o.max_batch = 2;
  const auto out = simulate_continuous(reqs, o, kCost);
  // Request 2 takes request 0's slot as soon as it retires, long before request 1 ends.
  EXPECT_LT(out[2].first_token_ms, out[1].finish_ms);
  EXPECT_GE(out[2].first_token_ms, out[0].finish_ms);
}

TEST(Continuous, SameRunForTheSameInputs) {
  const auto reqs = generate(WorkloadSpec{}, 7);
  const Metrics a = continuous(reqs, 16), b = continuous(reqs, 16);
  EXPECT_EQ(a.throughput_tok_s, b.throughput_tok_s);
  EXPECT_EQ(a.ttft_p99, b.ttft_p99);
  EXPECT_NE(generate(WorkloadSpec{}, 8)[0].arrival_ms, reqs[0].arrival_ms);
}

TEST(Admission, SheddingProtectsGoodputUnderOverload) {
  WorkloadSpec w;
  w.rate_per_s = 6;  // about twice what max_batch 16 can serve
  const auto reqs = generate(w, 1);
  ContinuousOptions o;
  o.max_batch = 16;
  const Metrics fifo = summarize(reqs, simulate_continuous(reqs, o, kCost), kSlo);
  o.shed_late = true;
  const Metrics shed = summarize(reqs, simulate_continuous(reqs, o, kCost), kSlo);
  EXPECT_GT(shed.shed, 0u);
  EXPECT_LT(shed.ttft_p99, kSlo.ttft_ms);
  EXPECT_GT(shed.goodput_tok_s, 5 * fifo.goodput_tok_s);
}

TEST(PrefixCache, HitsCutTtftAndReusePrefill) {
  WorkloadSpec w;
  w.shared_fraction = 0.9;
  w.prompt_min = 32;
  w.prompt_max = 256;
  w.requests = 300;
  const auto reqs = generate(w, 1);
  ContinuousOptions o;
  PagedPrefixKv cold(8192, 16, false), warm(8192, 16, true);
  o.kv = &cold;
  const Metrics a = summarize(reqs, simulate_continuous(reqs, o, kCost), kSlo);
  o.kv = &warm;
  const Metrics b = summarize(reqs, simulate_continuous(reqs, o, kCost), kSlo);
  EXPECT_EQ(a.cached_tokens, 0u);
  EXPECT_GT(b.cached_tokens, b.prompt_tokens / 2);
  EXPECT_LT(b.ttft_p50, a.ttft_p50);
  EXPECT_GT(warm.stats().block_hits, 0u);
}

TEST(KvLimitedAdmission, WaitsForMemoryAndRejectsTheImpossible) {
  std::vector<Request> reqs = {{0, 100, 100}, {0, 100, 100}, {0, 10'000, 10}};
  PagedPrefixKv kv(16, 16, false);  // 256 tokens: one 200-token request at a time
  ContinuousOptions o;
  o.max_batch = 4;
  o.kv = &kv;
  const auto out = simulate_continuous(reqs, o, kCost);
  EXPECT_TRUE(out[0].served);
  EXPECT_TRUE(out[1].served);
  EXPECT_GE(out[1].first_token_ms, out[0].finish_ms);  // waited for the first to free its blocks
  EXPECT_FALSE(out[2].served);                         // larger than the pool
}

TEST(Disaggregation, NoPrefillStallsAndHandoffFromKvMath) {
  DisaggOptions d{16, 131072, 50};
  EXPECT_NEAR(handoff_ms(d, 1024), 131072.0 * 1024 / 50e9 * 1000, 1e-12);  // 2.68 ms
  WorkloadSpec w;
  w.long_fraction = 0.2;
  w.rate_per_s = 2;
  const auto reqs = generate(w, 1);
  const Metrics dis = summarize(reqs, simulate_disaggregated(reqs, d, kCost), kSlo);
  ContinuousOptions o;
  const Metrics col = summarize(reqs, simulate_continuous(reqs, o, kCost), kSlo);
  EXPECT_EQ(dis.completed, reqs.size());
  EXPECT_LT(dis.worst_gap_p99, col.worst_gap_p99);
  EXPECT_LT(dis.tpot_p99, col.tpot_p99);
  EXPECT_LE(dis.worst_gap_p99, 2 * kCost.iteration_ms(16) + handoff_ms(d, 8192));
}

TEST(Workload, PoissonRateAndRanges) {
  WorkloadSpec w;
  w.requests = 20000;
  const auto reqs = generate(w, 3);
  const double span_s = reqs.back().arrival_ms / 1000;
  EXPECT_NEAR(static_cast<double>(reqs.size()) / span_s, 2.5, 0.1);
  for (const auto& r : reqs) {
    EXPECT_GE(r.prompt_tokens, 64u);
    EXPECT_LE(r.prompt_tokens, 1024u);
    EXPECT_GE(r.output_tokens, 10u);
    EXPECT_LE(r.output_tokens, 300u);
  }
}

}  // namespace
}  // namespace batching
