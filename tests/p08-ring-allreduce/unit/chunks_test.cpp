#include "ring_allreduce/chunks.hpp"

#include <gtest/gtest.h>

#include <numeric>
#include <vector>

namespace {

TEST(Chunks, BoundariesTileTheVectorForEveryWorldAndLength) {
  for (int world = 1; world <= 17; ++world) {
    for (std::size_t n = 0; n <= 100; ++n) {
      std::size_t expected_begin = 0;
      for (int i = 0; i < world; ++i) {
        const auto c = ring::chunk_bounds(n, world, i);
        ASSERT_EQ(c.begin, expected_begin) << "world " << world << " n " << n << " chunk " << i;
        ASSERT_LE(c.begin, c.end);
        // Balanced: sizes are floor(n/N) or that plus one.
        ASSERT_GE(c.size(), n / static_cast<std::size_t>(world));
        ASSERT_LE(c.size(), n / static_cast<std::size_t>(world) + 1);
        expected_begin = c.end;
      }
      ASSERT_EQ(expected_begin, n) << "world " << world << " n " << n;
    }
  }
}

TEST(Chunks, ModIsNonNegativeForNegativeArguments) {
  EXPECT_EQ(ring::mod(-1, 8), 7);
  EXPECT_EQ(ring::mod(-9, 8), 7);
  EXPECT_EQ(ring::mod(0 - 6 - 1, 8), 1);
  EXPECT_EQ(ring::mod(13, 8), 5);
}

// Simulates the ring on index sets only: after reduce-scatter rank r's chunk
// (r+1) must contain every rank's contribution, and after all-gather every rank
// must hold every chunk fully reduced.
TEST(Chunks, StepScheduleReducesEveryChunkExactlyOnceFromEveryRank) {
  for (int world = 2; world <= 16; ++world) {
    // have[r][c] = bitmask of ranks whose contribution rank r holds for chunk c
    std::vector<std::vector<unsigned>> have(world, std::vector<unsigned>(world));
    for (int r = 0; r < world; ++r)
      for (int c = 0; c < world; ++c) have[r][c] = 1u << r;
    for (int s = 0; s < world - 1; ++s) {
      auto next = have;
      for (int r = 0; r < world; ++r) {
        const int to = ring::mod(r + 1, world);
        const int c = ring::rs_send_chunk(r, s, world);
        ASSERT_EQ(c, ring::rs_recv_chunk(to, s, world)) << "sender and receiver disagree on the chunk";
        ASSERT_EQ(have[to][c] & have[r][c], 0u) << "a contribution would be added twice";
        next[to][c] |= have[r][c];
      }
      have = next;
    }
    const unsigned all = (world == 32) ? ~0u : (1u << world) - 1;
    for (int r = 0; r < world; ++r) ASSERT_EQ(have[r][ring::owned_chunk(r, world)], all) << "world " << world;
    for (int s = 0; s < world - 1; ++s) {
      auto next = have;
      for (int r = 0; r < world; ++r) {
        const int to = ring::mod(r + 1, world);
        const int c = ring::ag_send_chunk(r, s, world);
        ASSERT_EQ(c, ring::ag_recv_chunk(to, s, world));
        ASSERT_EQ(have[r][c], all) << "all-gather forwarded an incomplete chunk";
        next[to][c] = have[r][c];
      }
      have = next;
    }
    for (int r = 0; r < world; ++r)
      for (int c = 0; c < world; ++c) ASSERT_EQ(have[r][c], all) << "world " << world << " rank " << r;
  }
}

TEST(ByteFormula, CurriculumNumbers) {
  // 80,000 doubles on 8 ranks: 1.75 * 640,000 and 7 * 640,000.
  for (int r = 0; r < 8; ++r) EXPECT_EQ(ring::ring_bytes_sent(80'000, 8, r, 8), 1'120'000u);
  EXPECT_EQ(ring::naive_bytes_sent(80'000, 8, 8), 4'480'000u);
  EXPECT_DOUBLE_EQ(ring::ring_bound_bytes(80'000, 8, 8), 1'120'000.0);
  EXPECT_EQ(ring::ring_bytes_sent(80'000, 4, 0, 8), 960'000u);
  EXPECT_EQ(ring::ring_bytes_sent(1'000'000, 8, 3, 8), 14'000'000u);
}

TEST(ByteFormula, UnevenChunksSumToTheBoundExactly) {
  for (int world = 2; world <= 17; ++world) {
    for (std::size_t n : {1u, 2u, 7u, 13u, 100u, 1001u, 80'003u}) {
      std::uint64_t total = 0;
      for (int r = 0; r < world; ++r) {
        const auto b = ring::ring_bytes_sent(n, world, r, 4);
        total += b;
        // No rank strays more than two elements from the mean.
        EXPECT_LE(std::abs(static_cast<double>(b) - ring::ring_bound_bytes(n, world, 4)), 8.0);
      }
      EXPECT_EQ(total, 2u * (world - 1) * n * 4) << "world " << world << " n " << n;
    }
  }
}

}  // namespace
