// The sliced schedule of the fused ring all-reduce (ring_pipeline.hpp): every
// element of every chunk travels once per step, what a step forwards is what
// the step before received, and the bytes add up to the step-by-step ring's.
#include "ring_allreduce/ring_pipeline.hpp"

#include <gtest/gtest.h>

#include <vector>

#include "ring_allreduce/chunks.hpp"

namespace {

TEST(RingSchedule, SlicesCoverEveryChunkOncePerStepAndForwardWhatArrived) {
  for (int world : {2, 3, 4, 5, 7}) {
    for (std::size_t n : {1u, 6u, 7u, 1001u, 4'099u}) {
      for (std::size_t slice_bytes : {0u, 8u, 24u, 200u, 4096u}) {
        for (int rank = 0; rank < world; ++rank) {
          const auto s = ring::ring_schedule(n, world, rank, 8, slice_bytes);
          ASSERT_GE(s.rounds, 1u);
          ASSERT_EQ(s.messages(), s.rounds * static_cast<std::size_t>(2 * (world - 1)));
          // Per step: the slices sent, over all rounds, tile exactly the step's chunk.
          for (int step = 0; step < s.steps(); ++step) {
            const int chunk = step < world - 1 ? ring::rs_send_chunk(rank, step, world)
                                               : ring::ag_send_chunk(rank, step - (world - 1), world);
            const auto whole = ring::chunk_bounds(n, world, chunk);
            std::size_t at = whole.begin;
            for (std::size_t k = 0; k < s.rounds; ++k) {
              const auto c = s.out_range(k * static_cast<std::size_t>(s.steps()) + static_cast<std::size_t>(step));
              EXPECT_EQ(c.begin, at) << "world " << world << " n " << n << " slice " << slice_bytes;
              EXPECT_LE(c.size(), s.slice);
              at = c.end;
            }
            EXPECT_EQ(at, whole.end) << "world " << world << " n " << n << " slice " << slice_bytes;
          }
          std::uint64_t bytes = 0;
          for (std::size_t i = 0; i < s.messages(); ++i) {
            bytes += s.out_range(i).size() * 8;
            // Step s+1 of a round sends exactly what step s of that round received.
            if (s.step_of(i + 1) != 0 && i + 1 < s.messages()) {
              EXPECT_EQ(s.out_range(i + 1).begin, s.in_range(i).begin);
              EXPECT_EQ(s.out_range(i + 1).end, s.in_range(i).end);
            }
          }
          EXPECT_EQ(bytes, ring::ring_bytes_sent(n, world, rank, 8)) << "world " << world << " n " << n;
          // What this rank receives in message i its left neighbour sends in message i.
          const auto left = ring::ring_schedule(n, world, ring::mod(rank - 1, world), 8, slice_bytes);
          for (std::size_t i = 0; i < s.messages(); ++i) {
            EXPECT_EQ(s.in_range(i).begin, left.out_range(i).begin);
            EXPECT_EQ(s.in_range(i).end, left.out_range(i).end);
          }
        }
      }
    }
  }
}

TEST(RingSchedule, HalfARingPerSliceAndOneRoundWithoutSlicing) {
  // 16 MiB of doubles on 4 ranks: 4 MiB chunks, 512 KiB slices: 8 rounds of 6 steps.
  const auto s = ring::ring_schedule(std::size_t{2} << 20, 4, 0, 8, std::size_t{512} << 10);
  EXPECT_EQ(s.slice, 65'536u);
  EXPECT_EQ(s.rounds, 8u);
  EXPECT_EQ(s.messages(), 48u);
  const auto whole = ring::ring_schedule(std::size_t{2} << 20, 4, 0, 8, 0);
  EXPECT_EQ(whole.rounds, 1u);
  EXPECT_EQ(whole.messages(), 6u);
  // An empty vector still has one round, so the step hook sees every step.
  EXPECT_EQ(ring::ring_schedule(0, 3, 1, 8, 64).messages(), 4u);
}

}  // namespace
