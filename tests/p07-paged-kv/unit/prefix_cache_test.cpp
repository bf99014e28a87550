#include "paged_kv/prefix_cache.hpp"

#include <gtest/gtest.h>

#include <numeric>

#include "paged_kv/prefix_workload.hpp"

namespace paged_kv {
namespace {

std::vector<Token> iota_tokens(std::size_t n, Token first) {
  std::vector<Token> v(n);
  std::iota(v.begin(), v.end(), first);
  return v;
}

TEST(ChainedHash, DependsOnTheWholePrefix) {
  auto a = iota_tokens(64, 0);
  auto b = a;
  b[0] = -5;  // only the first block differs
  const auto ha = chained_block_hashes(a, 16), hb = chained_block_hashes(b, 16);
  ASSERT_EQ(ha.size(), 4u);
  for (std::size_t i = 0; i < 4; ++i)
    EXPECT_NE(ha[i], hb[i]);  // same later tokens, different chain
  EXPECT_EQ(chained_block_hashes(std::span(a).first(40), 16).size(), 2u);  // full blocks only
}

TEST(PrefixCache, SecondIdenticalPromptHitsAllButTheLastToken) {
  BlockAllocator pool(64, 16);
  PrefixCache cache(pool);
  const auto prompt = iota_tokens(64, 0);  // 4 full blocks
  Admission first = cache.admit(prompt);
  EXPECT_EQ(first.cached_tokens, 0u);
  Admission second = cache.admit(prompt);
  // 63 tokens may hit (the last is recomputed for its logits): 3 full blocks.
  EXPECT_EQ(second.cached_tokens, 48u);
  EXPECT_EQ(cache.stats().hits, 3u);
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(second.sequence.block_table()[i], first.sequence.block_table()[i]);
    EXPECT_EQ(pool.refcount(first.sequence.block_table()[i]), 2);
  }
  EXPECT_EQ(second.sequence.tokens(), prompt);
}

TEST(PrefixCache, DivergentPromptHitsOnlyTheCommonPrefix) {
  BlockAllocator pool(64, 16);
  PrefixCache cache(pool);
  auto a = iota_tokens(80, 0);
  auto b = a;
  b[40] = -1;  // diverges inside block 2
  Admission sa = cache.admit(a);
  Admission sb = cache.admit(b);
  EXPECT_EQ(sb.cached_tokens, 32u);  // blocks 0 and 1
  EXPECT_EQ(sb.sequence.tokens(), b);
  EXPECT_EQ(sa.sequence.tokens(), a);
}

TEST(PrefixCache, FreedBlocksStayCachedUntilEvicted) {
  BlockAllocator pool(8, 16);
  PrefixCache cache(pool);
  const auto prompt = iota_tokens(65, 0);  // 4 full blocks + 1 token
  { Admission a = cache.admit(prompt); }   // request finishes: blocks freed but cached
  EXPECT_EQ(pool.free_blocks(), 8u);
  EXPECT_EQ(cache.cached_blocks(), 4u);
  Admission again = cache.admit(prompt);
  EXPECT_EQ(again.cached_tokens, 64u);  // revived from the free queue
  again.sequence.release();
  // A different 8-block prompt needs the whole pool: every cached block is evicted.
  Admission other = cache.admit(iota_tokens(128, 10'000));
  ASSERT_EQ(other.status, Status::kOk);
  EXPECT_EQ(cache.stats().evictions, 4u);
  other.sequence.release();
  Admission cold = cache.admit(prompt);
  EXPECT_EQ(cold.cached_tokens, 0u);
}

TEST(PrefixCache, LruEvictsTheColdestPromptFirst) {
  BlockAllocator pool(6, 16);
  PrefixCache cache(pool);
  const auto p1 = iota_tokens(33, 0), p2 = iota_tokens(33, 1000);  // 2 full blocks + 1 token each
  { Admission a = cache.admit(p1); }
  { Admission b = cache.admit(p2); }
  { Admission a = cache.admit(p1); }                     // p1 is now the most recently used
  { Admission c = cache.admit(iota_tokens(33, 5000)); }  // needs 3 blocks: evicts from p2 first
  EXPECT_EQ(cache.admit(p1).cached_tokens, 32u);
}

TEST(PrefixCache, WriteIntoACachedBlockCopiesIt) {
  BlockAllocator pool(8, 16);
  PrefixCache cache(pool);
  const auto prompt = iota_tokens(33, 0);
  Admission a = cache.admit(prompt);
  const BlockId cached = a.sequence.block_table()[0];
  ASSERT_EQ(a.sequence.write(3, -7), Status::kOk);
  EXPECT_NE(a.sequence.block_table()[0], cached);
  EXPECT_EQ(pool.slots(cached)[3], 3);  // the cache still holds the original KV
}

TEST(PrefixWorkload, BiggerPoolsHitMoreAndSameSeedSameResult) {
  PrefixWorkload w;
  w.requests = 400;
  const PrefixRun small = run_prefix_workload(w, 1536, 16);
  const PrefixRun big = run_prefix_workload(w, 8192, 16);
  EXPECT_EQ(small.block_lookups, big.block_lookups);
  EXPECT_GT(big.hit_rate(), small.hit_rate());
  EXPECT_GT(small.evictions, big.evictions);
  EXPECT_EQ(run_prefix_workload(w, 1536, 16).block_hits, small.block_hits);
  EXPECT_EQ(small.rejected, 0u);
}

}  // namespace
}  // namespace paged_kv
