#include "simt/machine.hpp"

#include <gtest/gtest.h>

#include "simt/assembler.hpp"
#include "simt/kernels.hpp"

using simt::Config;
using simt::run;
using simt::RunResult;

namespace {

RunResult run_source(const std::string& src, Config c = {}) { return run(simt::assemble(src, "t.simt"), c); }
RunResult run_kernel(std::string_view name, Config c = {}) { return run(simt::load_builtin(name), c); }

std::int64_t even_odd(std::int64_t t) { return t * t + 1 - t % 2; }

}  // namespace

// The curriculum's numbers, and the lane-cycle counts they come from.
TEST(Divergence, IssuesAndLaneCyclesOfTheFourKernels) {
  struct Want {
    const char* name;
    std::uint64_t issues, lane_cycles;
    int depth;
  };
  for (const Want& w : {Want{"uniform", 6, 192, 0}, Want{"warp_uniform", 7, 224, 0}, Want{"even_odd", 10, 224, 1},
                        Want{"max_divergent", 226, 4224, 1}}) {
    const auto r = run_kernel(w.name);
    EXPECT_EQ(r.stats.issues, w.issues) << w.name;
    EXPECT_EQ(r.stats.lane_cycles, w.lane_cycles) << w.name;
    EXPECT_EQ(r.stats.max_stack_depth, w.depth) << w.name;
    EXPECT_TRUE(r.stats.stack_empty_at_exit) << w.name;
  }
  EXPECT_NEAR(run_kernel("even_odd").stats.util_pct(), 70.0, 1e-9);
  EXPECT_NEAR(run_kernel("max_divergent").stats.util_pct(), 58.407, 1e-3);
}

TEST(Divergence, PerLaneResultsOfEveryKernel) {
  const auto uniform = run_kernel("uniform");
  const auto warp_uniform = run_kernel("warp_uniform");
  const auto branchy = run_kernel("even_odd");
  const auto maxdiv = run_kernel("max_divergent");
  const auto selp = run_kernel("even_odd_selp");
  for (std::size_t t = 0; t < 32; ++t) {
    const auto ti = static_cast<std::int64_t>(t);
    EXPECT_EQ(uniform.mem[t], even_odd(ti)) << t;
    EXPECT_EQ(warp_uniform.mem[t], ti * ti) << t;  // t < 32 holds in every lane: the then-path
    EXPECT_EQ(branchy.mem[t], even_odd(ti)) << t;
    EXPECT_EQ(maxdiv.mem[t], even_odd(ti)) << t;
    EXPECT_EQ(selp.mem[t], even_odd(ti)) << t;
  }
  EXPECT_EQ(uniform.mem[32], 0);  // nothing written past the warp
}

TEST(Divergence, NestedBranchesReachDepthTwoAndUnwind) {
  const auto r = run_kernel("nested");
  EXPECT_EQ(r.stats.issues, 16u);
  EXPECT_EQ(r.stats.lane_cycles, 280u);
  EXPECT_EQ(r.stats.max_stack_depth, 2);
  EXPECT_TRUE(r.stats.stack_empty_at_exit);
  EXPECT_EQ(r.warps[0].mask, simt::kFullMask);
  for (std::size_t t = 0; t < 32; ++t) EXPECT_EQ(r.mem[t], t % 2 == 0 ? 0 : (t % 4 == 1 ? 100 : 300)) << t;
}

TEST(Divergence, InnerMasksOfTheNestedSplit) {
  std::vector<simt::LaneMask> masks_at_li;
  Config c;
  c.on_issue = [&](const simt::IssueEvent& e) {
    if (e.instruction->op == simt::Opcode::kLi) masks_at_li.push_back(e.mask);
  };
  run_kernel("nested", c);
  ASSERT_EQ(masks_at_li.size(), 3u);
  EXPECT_EQ(masks_at_li[0], 0x22222222u);  // t % 4 == 1
  EXPECT_EQ(masks_at_li[1], 0x88888888u);  // t % 4 == 3
  EXPECT_EQ(masks_at_li[2], 0x55555555u);  // even lanes
}

TEST(Divergence, VoteAnyCountsOnlyActiveLanes) {
  const auto r = run_kernel("vote_any");
  for (std::size_t t = 0; t < 32; ++t) {
    EXPECT_EQ(r.mem[t], 1) << "full-warp vote, lane " << t;
    EXPECT_EQ(r.mem[32 + t], t % 2 == 0 ? 1 : 0) << "vote inside the split, lane " << t;
  }
}

TEST(Divergence, IfConversionRemovesTheDivergence) {
  const auto r = run_kernel("even_odd_selp");
  EXPECT_EQ(r.stats.issues, 7u);
  EXPECT_DOUBLE_EQ(r.stats.util_pct(), 100.0);
  EXPECT_EQ(r.stats.max_stack_depth, 0);
}

TEST(Semantics, MasksGateWritesAndInactiveLanesKeepTheirRegisters) {
  const auto r = run_source(
      "TID r0\nLI r2, 7\nMOD r1, r0, 2\nBRZ r1, E, J\nLI r2, 99\nE: ADD r3, r0, 0\nJ: RECONV\n");
  for (int lane = 0; lane < 32; ++lane) EXPECT_EQ(r.warps[0].reg(2, lane), lane % 2 ? 99 : 7) << lane;
}

TEST(Semantics, ReconvWithoutAMatchingEntryIsAnIssuedNoOp) {
  const auto r = run_source("RECONV\nRECONV\nTID r0\n");
  EXPECT_EQ(r.stats.issues, 3u);
  EXPECT_TRUE(r.stats.stack_empty_at_exit);
}

TEST(Semantics, ModFollowsTheSignOfTheDividendAndArithmeticWraps) {
  const auto r = run_source(
      "LI r1, -7\nMOD r2, r1, 3\nLI r3, 9223372036854775807\nADD r4, r3, 1\nLI r5, -9223372036854775807\n"
      "SUB r5, r5, 1\nMOD r6, r5, -1\nSLT r7, r1, 0\nSEQ r8, r2, -1\n");
  const auto& w = r.warps[0];
  EXPECT_EQ(w.reg(2, 0), -1);
  EXPECT_EQ(w.reg(4, 0), INT64_MIN);
  EXPECT_EQ(w.reg(6, 0), 0);
  EXPECT_EQ(w.reg(7, 0), 1);
  EXPECT_EQ(w.reg(8, 0), 1);
}

TEST(Semantics, TidIsWarpTimes32PlusLane) {
  Config c;
  c.warps = 3;
  const auto r = run_source("TID r0\nST r0, r0\n", c);
  for (std::size_t i = 0; i < 96; ++i) EXPECT_EQ(r.mem[i], static_cast<std::int64_t>(i));
  EXPECT_EQ(r.stats.issues, 6u);
}

TEST(Semantics, UniformLoopsRun) {
  const auto r = run_source("LI r1, 0\nL: ADD r1, r1, 1\nSLT r2, r1, 10\nBRZ r2, D, D\nJMP L\nD: RECONV\nST r1, r1\n");
  EXPECT_EQ(r.warps[0].reg(1, 5), 10);
  EXPECT_EQ(r.mem[10], 10);
  EXPECT_EQ(r.stats.issues, 1u + 10 * 3 + 9 + 1 + 1);  // LI, 10x(ADD SLT BRZ), 9 JMPs, RECONV, ST
}

TEST(Faults, OutOfRangeStoreNamesLaneAndAddress) {
  Config c;
  c.mem_words = 16;
  try {
    run_source("TID r0\nST r0, r0\n", c);
    FAIL() << "store past the end must fault";
  } catch (const simt::SimtError& e) {
    EXPECT_STREQ(e.what(), "t.simt:2: runtime error: ST address 16 out of range [0, 16) in lane 16 (in 'ST r0, r0')");
  }
  EXPECT_THROW(run_source("LI r1, -1\nLD r2, r1\n"), simt::SimtError);
}

TEST(Faults, DivergentBackwardBranchIsRejected) {
  // Lanes would loop a different number of times: per-lane trip counts.
  EXPECT_THROW(run_source("TID r0\nL: SUB r0, r0, 1\nSLT r1, r0, 0\nBRZ r1, L, J\nJ: RECONV\n"), simt::SimtError);
  EXPECT_THROW(run_source("TID r0\nL: MOD r1, r0, 2\nBRZ r1, E, J\nJMP L\nE: TID r2\nJ: RECONV\n"), simt::SimtError);
}

TEST(Faults, RunawayLoopHitsMaxIssues) {
  Config c;
  c.max_issues = 1000;
  EXPECT_THROW(run_source("L: JMP L\n", c), simt::SimtError);
}

TEST(Faults, ModByZero) { EXPECT_THROW(run_source("TID r0\nMOD r1, r0, 0\n"), simt::SimtError); }

TEST(Faults, AbsurdSizesAreUsageErrors) {
  Config c;
  c.warps = 0;
  EXPECT_THROW(run_source("TID r0\n", c), gpulab::UsageError);
  c.warps = 1;
  c.mem_words = 0;
  EXPECT_THROW(run_source("TID r0\n", c), gpulab::UsageError);
}

// The assembler decodes a program once for all its runs; a Program built or
// edited by hand carries no decoded form, and run() decodes it itself. Both
// must run identically, on every kernel, with several warps and a pitfall on.
TEST(Decode, APreDecodedAndAHandBuiltProgramRunAlike) {
  for (const char* name : {"uniform", "warp_uniform", "even_odd", "max_divergent", "nested", "vote_any",
                           "even_odd_selp"}) {
    const simt::Program assembled = simt::load_builtin(name);
    ASSERT_NE(assembled.decoded, nullptr) << name;
    simt::Program by_hand{assembled.name, assembled.code, nullptr};
    for (const bool unmasked : {false, true}) {
      Config c;
      c.warps = 3;
      c.pitfalls.unmasked_writes = unmasked;
      const auto a = run(assembled, c);
      const auto b = run(by_hand, c);
      EXPECT_EQ(a.mem, b.mem) << name;
      EXPECT_EQ(a.stats.issues, b.stats.issues) << name;
      EXPECT_EQ(a.stats.lane_cycles, b.stats.lane_cycles) << name;
      EXPECT_EQ(a.stats.cycles, b.stats.cycles) << name;
      for (std::size_t w = 0; w < a.warps.size(); ++w) EXPECT_EQ(a.warps[w].regs, b.warps[w].regs) << name << w;
    }
  }
}

// An edited Program whose decoded form no longer matches its code (a different
// length) is decoded afresh rather than run from the stale form.
TEST(Decode, AProgramEditedToADifferentLengthIsDecodedAfresh) {
  simt::Program p = simt::assemble("TID r0\nST r0, r0\n", "t.simt");
  p.code.pop_back();  // no ST left: memory stays zero
  const auto r = run(p);
  EXPECT_EQ(r.stats.issues, 1u);
  for (std::size_t t = 0; t < 32; ++t) EXPECT_EQ(r.mem[t], 0) << t;
}
