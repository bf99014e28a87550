#include <gtest/gtest.h>

#include "paged_kv/beam_search.hpp"
#include "paged_kv/block_size_sweep.hpp"
#include "paged_kv/eviction.hpp"

namespace paged_kv {
namespace {

TEST(Eviction, BothPoliciesPreemptAndRecoverIntactContents) {
  const PressureSpec spec;  // 24 x 1024 tokens need 1536 blocks; the pool has 1024
  const RecoveryCost cost;
  const PressureRun rc = run_under_pressure(spec, Recovery::kRecompute, cost);
  const PressureRun sw = run_under_pressure(spec, Recovery::kSwap, cost);
  EXPECT_GT(rc.preemptions, 0u);
  EXPECT_TRUE(rc.contents_ok);
  EXPECT_TRUE(sw.contents_ok);
  EXPECT_EQ(rc.blocks_swapped_out, 0u);
  EXPECT_GT(rc.tokens_recomputed, 0u);
  EXPECT_EQ(sw.tokens_recomputed, 0u);
  EXPECT_EQ(sw.blocks_swapped_out, sw.blocks_swapped_in);  // everything that left came back
  EXPECT_EQ(rc.preemptions, sw.preemptions);               // same schedule, different recovery
  // Costs follow the stated model.
  EXPECT_DOUBLE_EQ(rc.recovery_ms, static_cast<double>(rc.tokens_recomputed) * 0.02);
  EXPECT_NEAR(sw.recovery_ms,
              static_cast<double>(2 * sw.blocks_swapped_out) * 16 * 131072 / 64e9 * 1000, 1e-9);
}

TEST(Eviction, NoPressureNoPreemption) {
  PressureSpec spec;
  spec.pool_blocks = 24 * 64 + 24;
  const PressureRun r = run_under_pressure(spec, Recovery::kSwap, RecoveryCost{});
  EXPECT_EQ(r.preemptions, 0u);
  EXPECT_EQ(r.recovery_ms, 0.0);
}

TEST(Eviction, FullHostPoolFallsBackToRecompute) {
  PressureSpec spec;
  spec.host_blocks = 10;
  const PressureRun r = run_under_pressure(spec, Recovery::kSwap, RecoveryCost{});
  EXPECT_GT(r.swap_fallbacks, 0u);
  EXPECT_GT(r.tokens_recomputed, 0u);
  EXPECT_TRUE(r.contents_ok);
}

TEST(Eviction, CrossoverOfTheCostModel) {
  RecoveryCost c;
  EXPECT_NEAR(c.swap_round_trip_ms_per_token(), 2.0 * 131072 / 64e9 * 1000, 1e-12);  // 0.0041 ms
  PressureSpec spec;
  c.prefill_ms_per_token = c.swap_round_trip_ms_per_token() / 10;  // a very fast prefill
  const PressureRun rc = run_under_pressure(spec, Recovery::kRecompute, c);
  const PressureRun sw = run_under_pressure(spec, Recovery::kSwap, c);
  EXPECT_LT(rc.recovery_ms, sw.recovery_ms);  // now recompute wins
}

TEST(Eviction, RejectsASequenceLargerThanThePool) {
  PressureSpec spec;
  spec.pool_blocks = 10;
  EXPECT_THROW(run_under_pressure(spec, Recovery::kSwap, RecoveryCost{}), std::invalid_argument);
}

TEST(Beams, ParallelSamplingCopiesOnlyThePartialPromptBlock) {
  BeamSpec spec;  // 4 beams, 100-token prompt: 6 full blocks + 4 tokens
  const BeamRun r = run_beams(spec);
  EXPECT_EQ(r.shared_prompt_blocks, 6u);
  EXPECT_EQ(r.cow_copies, 3u);  // the last beam to write owns the original partial block
  EXPECT_TRUE(r.contents_ok);
  EXPECT_TRUE(r.refcounts_ok);
  EXPECT_TRUE(r.all_freed);
  // 6 shared + 4 beams x (blocks 6..10 of 164 tokens) = 6 + 4 x 5.
  EXPECT_EQ(r.physical_blocks, 26u);
  EXPECT_EQ(r.naive_blocks, 44u);
}

TEST(Beams, AlignedPromptNeedsNoCopyAtAll) {
  BeamSpec spec;
  spec.prompt = 96;
  EXPECT_EQ(run_beams(spec).cow_copies, 0u);
}

TEST(Beams, BeamSearchSharesHistoryAndStaysConsistent) {
  BeamSpec spec;
  spec.fork_every = 16;
  const BeamRun r = run_beams(spec);
  EXPECT_GT(r.forks, spec.width);
  EXPECT_TRUE(r.contents_ok);
  EXPECT_TRUE(r.refcounts_ok);
  EXPECT_TRUE(r.all_freed);
  EXPECT_LT(r.physical_blocks, r.naive_blocks);
}

TEST(BlockSizeSweep, SmallerBlocksWasteLessButNeedLongerTables) {
  const auto lengths = sample_lengths(500, 1);
  const std::vector<std::size_t> sizes{4, 8, 16, 32};
  const auto rows = block_size_sweep(lengths, sizes, 65536);
  ASSERT_EQ(rows.size(), 4u);
  for (std::size_t i = 1; i < rows.size(); ++i) {
    EXPECT_GT(rows[i].waste_tokens_mean, rows[i - 1].waste_tokens_mean);
    EXPECT_LT(rows[i].table_entries_mean, rows[i - 1].table_entries_mean);
    EXPECT_LE(rows[i].sequences_fit, rows[i - 1].sequences_fit);
  }
  for (const auto& r : rows)
    EXPECT_LT(r.waste_tokens_mean, static_cast<double>(r.block_size));  // < one block
}

TEST(BlockSizeSweep, NoWasteWhenEveryLengthIsAMultiple) {
  const std::vector<std::size_t> lengths{768, 768};
  const std::vector<std::size_t> sizes{4, 8, 16, 32};
  for (const auto& r : block_size_sweep(lengths, sizes, 4096)) EXPECT_EQ(r.waste_tokens_mean, 0.0);
}

}  // namespace
}  // namespace paged_kv
