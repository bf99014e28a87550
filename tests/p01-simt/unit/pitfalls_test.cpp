// Each classic bug, switched on, must produce the wrong result it is known for.
#include <gtest/gtest.h>

#include "simt/kernels.hpp"
#include "simt/machine.hpp"

namespace {

simt::RunResult even_odd_with(simt::Pitfalls bug) {
  simt::Config c;
  c.pitfalls = bug;
  return simt::run(simt::load_builtin("even_odd"), c);
}

std::int64_t expected(std::size_t t) { return static_cast<std::int64_t>(t * t + 1 - t % 2); }

}  // namespace

TEST(Pitfalls, ReconvergingAtTheBranchTargetLosesTheEvenPath) {
  simt::Pitfalls bug;
  bug.reconverge_at_target = true;
  const auto r = even_odd_with(bug);
  EXPECT_EQ(r.stats.issues, 7u);                // the even path never issues
  EXPECT_FALSE(r.stats.stack_empty_at_exit);    // its entry is never popped
  for (std::size_t t = 0; t < 32; ++t) {
    if (t % 2) EXPECT_EQ(r.mem[t], expected(t)) << t;
    else EXPECT_EQ(r.mem[t], 0) << "even lane " << t << " should have been lost";
  }
}

TEST(Pitfalls, UnmaskedWritesCorruptTheOddLanes) {
  simt::Pitfalls bug;
  bug.unmasked_writes = true;
  const auto r = even_odd_with(bug);
  EXPECT_EQ(r.stats.issues, 10u);  // the cost is unchanged; only the values are wrong
  for (std::size_t t = 0; t < 32; ++t) {
    if (t % 2) EXPECT_EQ(r.mem[t], static_cast<std::int64_t>(t * t + 1)) << "odd lane " << t << " overwritten by the even path";
    else EXPECT_EQ(r.mem[t], expected(t)) << t;
  }
}

TEST(Pitfalls, UnmaskedWritesLetTheLastCaseWinEverywhere) {
  simt::Config c;
  c.pitfalls.unmasked_writes = true;
  const auto r = simt::run(simt::load_builtin("max_divergent"), c);
  for (std::size_t t = 0; t < 32; ++t) EXPECT_EQ(r.mem[t], 961) << t;  // case 31: 31*31 + 1 - 1
}

TEST(Pitfalls, JmpAsReconvergenceSkipsTheTakenPath) {
  simt::Pitfalls bug;
  bug.jmp_reconverges = true;
  const auto r = even_odd_with(bug);
  EXPECT_EQ(r.stats.issues, 7u);
  EXPECT_TRUE(r.stats.stack_empty_at_exit);  // the stack looks fine: the bug hides
  int wrong = 0;
  for (std::size_t t = 0; t < 32; ++t) wrong += r.mem[t] != expected(t);
  EXPECT_EQ(wrong, 16);
}

TEST(Pitfalls, NoPitfallMeansNoWrongLane) {
  const auto r = even_odd_with({});
  for (std::size_t t = 0; t < 32; ++t) EXPECT_EQ(r.mem[t], expected(t)) << t;
}
