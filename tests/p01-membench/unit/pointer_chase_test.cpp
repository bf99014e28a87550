#include "membench/pointer_chase.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>

namespace membench {
namespace {

TEST(Sattolo, IsOneCycleThroughEveryNode) {
  for (std::size_t n : {1UL, 2UL, 3UL, 64UL, 1000UL, 65536UL}) {
    gpulab::Rng rng(42 + n);
    const auto next = sattolo_cycle(n, rng);
    EXPECT_EQ(cycle_length_from_zero(next), n) << "n=" << n;
    // A permutation: every node is somebody's successor exactly once.
    auto sorted = next;
    std::sort(sorted.begin(), sorted.end());
    std::vector<std::uint32_t> ids(n);
    std::iota(ids.begin(), ids.end(), 0U);
    EXPECT_EQ(sorted, ids);
  }
}

TEST(Sattolo, HasNoFixedPointAndIsNotTheIdentityChain) {
  gpulab::Rng rng(7);
  const auto next = sattolo_cycle(4096, rng);
  std::size_t in_order = 0;
  for (std::size_t i = 0; i < next.size(); ++i) {
    EXPECT_NE(next[i], i);
    if (next[i] == (i + 1) % next.size()) ++in_order;
  }
  EXPECT_LT(in_order, 20U);  // random order: the prefetcher has nothing to follow
}

TEST(Sattolo, SameSeedSameChain) {
  gpulab::Rng a(9), b(9), c(10);
  EXPECT_EQ(sattolo_cycle(500, a), sattolo_cycle(500, b));
  EXPECT_NE(sattolo_cycle(500, b), sattolo_cycle(500, c));
}

TEST(CycleLength, RejectsTwoCyclesAndOutOfRangePointers) {
  const std::vector<std::uint32_t> two_cycles = {1, 0, 3, 2};
  EXPECT_EQ(cycle_length_from_zero(two_cycles), 2U);  // not 4: the chase would miss half the buffer
  const std::vector<std::uint32_t> broken = {5, 0};
  EXPECT_EQ(cycle_length_from_zero(broken), 0U);
  const std::vector<std::uint32_t> tail = {1, 2, 1};  // 0 -> 1 -> 2 -> 1 ... never back to 0
  EXPECT_EQ(cycle_length_from_zero(tail), 4U);
}

TEST(SequentialCycle, IsTheIdentityChain) {
  const auto next = sequential_cycle(8);
  EXPECT_EQ(next, (std::vector<std::uint32_t>{1, 2, 3, 4, 5, 6, 7, 0}));
  EXPECT_EQ(cycle_length_from_zero(next), 8U);
}

TEST(ChaseBuffer, PointersFollowThePermutationAndComeBackAfterNLoads) {
  gpulab::Rng rng(3);
  const auto next = sattolo_cycle(1024, rng);
  const ChaseBuffer buf(next, false);
  EXPECT_EQ(buf.bytes(), 1024U * 64U);
  const auto* base = static_cast<const char*>(buf.head());
  // One load from node 0 lands on node next[0], 64 bytes per node.
  EXPECT_EQ(chase(buf.head(), 1), base + 64 * next[0]);
  EXPECT_EQ(chase(buf.head(), 2), base + 64 * next[next[0]]);
  EXPECT_EQ(chase(buf.head(), 1024), buf.head());
  EXPECT_EQ(chase(buf.head(), 3 * 1024 + 17), chase(buf.head(), 17));
}

TEST(TimeChase, ReportsPositiveLatencyAndMinNotAboveMedian) {
  ChaseOptions o;
  o.loads = 20000;
  o.reps = 3;
  const auto t = time_chase(std::size_t{64} << 10, o);
  EXPECT_GT(t.ns_min, 0.0);
  EXPECT_LE(t.ns_min, t.ns_median);
}

}  // namespace
}  // namespace membench
