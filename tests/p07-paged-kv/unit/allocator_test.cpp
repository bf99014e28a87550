#include <gtest/gtest.h>

#include <algorithm>

#include "paged_kv/block_allocator.hpp"
#include "paged_kv/sequence.hpp"

namespace paged_kv {
namespace {

TEST(BlockAllocator, RejectsZeroSizes) {
  EXPECT_THROW(BlockAllocator(0, 16), std::invalid_argument);
  EXPECT_THROW(BlockAllocator(8, 0), std::invalid_argument);
}

TEST(BlockAllocator, ExhaustionIsAReportedOutcome) {
  BlockAllocator pool(3, 16);
  EXPECT_TRUE(pool.allocate());
  EXPECT_TRUE(pool.allocate());
  EXPECT_TRUE(pool.allocate());
  EXPECT_FALSE(pool.allocate().has_value());
  EXPECT_EQ(pool.free_blocks(), 0u);
}

TEST(BlockAllocator, DoubleFreeIsDetected) {
  BlockAllocator pool(4, 16);
  const BlockId b = *pool.allocate();
  EXPECT_TRUE(pool.release(b));
  EXPECT_THROW(pool.release(b), DoubleFree);
  EXPECT_EQ(pool.free_blocks(), 4u);  // the bad free changed nothing
}

TEST(BlockAllocator, SharedBlockIsReclaimedOnlyAtZero) {
  BlockAllocator pool(4, 16);
  const BlockId b = *pool.allocate();
  pool.share(b);
  EXPECT_EQ(pool.refcount(b), 2);
  EXPECT_FALSE(pool.release(b));  // another owner still reads it
  EXPECT_EQ(pool.free_blocks(), 3u);
  EXPECT_TRUE(pool.release(b));
  EXPECT_EQ(pool.free_blocks(), 4u);
}

TEST(BlockAllocator, FreeQueueIsLeastRecentlyFreedFirst) {
  BlockAllocator pool(3, 4);
  const BlockId a = *pool.allocate(), b = *pool.allocate(), c = *pool.allocate();
  pool.release(b);
  pool.release(a);
  pool.release(c);
  EXPECT_EQ(pool.free_queue(), (std::vector<BlockId>{b, a, c}));
  EXPECT_EQ(*pool.allocate(), b);
}

TEST(BlockAllocator, FreePlusUsedIsAlwaysThePool) {
  BlockAllocator pool(64, 16);
  std::vector<Sequence> seqs;
  for (int i = 0; i < 40; ++i) {
    Sequence s(pool);
    for (int t = 0; t < 7 * i % 45; ++t) s.append(t);
    if (i % 3 == 0 && !seqs.empty()) seqs.push_back(seqs.back().fork());
    seqs.push_back(std::move(s));
    if (i % 5 == 4) seqs.erase(seqs.begin());
    EXPECT_EQ(pool.free_blocks() + pool.used_blocks(), pool.num_blocks());
    EXPECT_EQ(pool.free_queue().size(), pool.free_blocks());
    // Sum of refcounts == references held by all block tables.
    int refs = 0, held = 0;
    for (std::size_t b = 0; b < pool.num_blocks(); ++b)
      refs += pool.refcount(static_cast<BlockId>(b));
    for (const auto& q : seqs) held += static_cast<int>(q.block_table().size());
    EXPECT_EQ(refs, held);
  }
}

TEST(Sequence, TokenTLivesInBlockTOver16AtOffsetTMod16) {
  BlockAllocator pool(16, 16);
  Sequence s(pool);
  for (int t = 0; t < 100; ++t) ASSERT_EQ(s.append(1000 + t), Status::kOk);
  for (std::size_t t = 0; t < 100; ++t) {
    const auto [index, offset] = locate(t, 16);
    EXPECT_EQ(index, t / 16);
    EXPECT_EQ(offset, t % 16);
    EXPECT_EQ(pool.slots(s.block_table()[index])[offset], static_cast<Token>(1000 + t));
  }
}

TEST(Sequence, GrowsExactlyAtBlockBoundaries) {
  BlockAllocator pool(8, 16);
  Sequence s(pool);
  for (int t = 0; t < 16; ++t) s.append(t);
  EXPECT_EQ(s.block_table().size(), 1u);  // 16 tokens: one block
  s.append(16);
  EXPECT_EQ(s.block_table().size(), 2u);  // the 17th opens the second
  for (int t = 17; t < 32; ++t) s.append(t);
  EXPECT_EQ(s.block_table().size(), 2u);
  EXPECT_EQ(pool.used_blocks(), 2u);
}

TEST(Sequence, AppendOnFullPoolLeavesSequenceIntact) {
  BlockAllocator pool(2, 4);
  Sequence s(pool);
  for (int t = 0; t < 8; ++t) ASSERT_EQ(s.append(t), Status::kOk);
  EXPECT_EQ(s.append(8), Status::kPoolExhausted);
  EXPECT_EQ(s.length(), 8u);
  EXPECT_EQ(s.at(7), 7);
}

TEST(Sequence, DestructionReturnsEveryBlock) {
  BlockAllocator pool(8, 16);
  {
    Sequence s(pool);
    for (int t = 0; t < 50; ++t) s.append(t);
    Sequence f = s.fork();
    f.append(99);
  }
  EXPECT_EQ(pool.free_blocks(), 8u);
}

// The pitfall the curriculum names: writing into a shared block without COW
// corrupts every sharer.
TEST(Sequence, test_cow_on_divergence) {
  BlockAllocator pool(8, 16);
  Sequence a(pool);
  for (int t = 0; t < 20; ++t) a.append(t);  // B0 full, B1 holds 4 tokens
  Sequence b = a.fork();
  const BlockId b0 = a.block_table()[0], b1 = a.block_table()[1];
  EXPECT_EQ(pool.refcount(b0), 2);
  EXPECT_EQ(pool.refcount(b1), 2);
  EXPECT_EQ(pool.used_blocks(), 2u);

  ASSERT_EQ(b.append(777), Status::kOk);  // write into shared B1 → copy first
  EXPECT_EQ(b.cow_copies(), 1u);
  EXPECT_EQ(b.block_table()[0], b0);
  EXPECT_NE(b.block_table()[1], b1);
  EXPECT_EQ(pool.refcount(b0), 2);
  EXPECT_EQ(pool.refcount(b1), 1);
  EXPECT_EQ(pool.refcount(b.block_table()[1]), 1);
  EXPECT_EQ(pool.used_blocks(), 3u);
  EXPECT_EQ(a.length(), 20u);
  for (int t = 0; t < 20; ++t) EXPECT_EQ(a.at(static_cast<std::size_t>(t)), t);
  for (int t = 0; t < 20; ++t) EXPECT_EQ(b.at(static_cast<std::size_t>(t)), t);
  EXPECT_EQ(b.at(20), 777);

  a.release();
  EXPECT_EQ(pool.refcount(b0), 1);
  EXPECT_EQ(pool.refcount(b1), 0);
  EXPECT_EQ(pool.used_blocks(), 2u);
}

TEST(Sequence, OverwriteForksOnlyTheWrittenBlock) {
  BlockAllocator pool(300, 16);
  Sequence prompt(pool);
  for (int t = 0; t < 1064; ++t) prompt.append(t);
  Sequence other = prompt.fork();
  ASSERT_EQ(other.write(1000, -1), Status::kOk);  // token 1000 lives in block 62
  for (std::size_t i = 0; i < prompt.block_table().size(); ++i) {
    if (i == 62)
      EXPECT_NE(other.block_table()[i], prompt.block_table()[i]);
    else
      EXPECT_EQ(other.block_table()[i], prompt.block_table()[i]);
  }
  EXPECT_EQ(prompt.at(1000), 1000);
  EXPECT_EQ(other.at(1000), -1);
  EXPECT_EQ(other.cow_copies(), 1u);
}

TEST(Sequence, LastOwnerWritesInPlace) {
  BlockAllocator pool(8, 16);
  Sequence a(pool);
  for (int t = 0; t < 5; ++t) a.append(t);
  Sequence b = a.fork();
  b.release();
  a.append(5);  // refcount back to 1: no copy
  EXPECT_EQ(a.cow_copies(), 0u);
  EXPECT_EQ(pool.used_blocks(), 1u);
}

}  // namespace
}  // namespace paged_kv
