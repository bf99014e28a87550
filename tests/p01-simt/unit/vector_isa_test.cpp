// The issue loop is compiled for baseline x86-64, x86-64-v3 and x86-64-v4 and
// a run picks the best the CPU has; every copy this CPU can run must give the
// very same results as the baseline one: memory, every register of every
// lane, issues, lane-cycles and cycles, with and without pitfalls and trace.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "simt/assembler.hpp"
#include "simt/kernels.hpp"
#include "simt/machine.hpp"
#include "simt/vector_isa.hpp"

namespace {

using simt::Config;
using simt::VectorIsa;

// Every builtin kernel, plus programs that reach the ALU ops the kernels do
// not (64-bit MUL, negative SLT, register MOD, SELP with any mask) under
// partial masks of every width: one lane, four, five, half.
std::vector<simt::Program> programs() {
  std::vector<simt::Program> out;
  for (const auto& k : simt::builtin_kernels()) out.push_back(simt::load_builtin(k.name));
  out.push_back(simt::assemble(
      "TID r0\nLI r7, 0\n"
      "L: ADD r1, r0, r7\nMUL r2, r1, -3037000493\nSUB r3, r2, r0\nMUL r4, r3, r1\nSLT r5, r4, r2\n"
      "ADD r7, r7, 1\nSLT r8, r7, 20\nBRZ r8, D, D\nJMP L\nD: RECONV\nST r0, r4\n",
      "alu_loop"));
  for (const int width : {1, 4, 5, 16}) {
    out.push_back(simt::assemble(
        "TID r0\nSLT r1, r0, " + std::to_string(width) +
            "\nSUB r9, r0, 7\nBRZ r1, E, J\nMUL r2, r0, r0\nMOD r3, r9, 5\nLI r11, 3\nMOD r4, r0, r11\n"
            "SEQ r5, r4, 1\nSELP r6, r2, r3, r5\nVOTE_ANY r10, r5\nADD r6, r6, r10\nSLT r12, r9, r0\n"
            "SUB r13, r12, r6\nMUL r14, r13, r13\nJMP J\nE: LI r6, -1\nJ: RECONV\nST r0, r6\nLD r15, r0\n",
        "mask_" + std::to_string(width)));
  }
  return out;
}

void expect_same(const simt::RunResult& want, const simt::RunResult& got, const std::string& what) {
  EXPECT_EQ(got.mem, want.mem) << what;
  EXPECT_EQ(got.stats.issues, want.stats.issues) << what;
  EXPECT_EQ(got.stats.lane_cycles, want.stats.lane_cycles) << what;
  EXPECT_EQ(got.stats.cycles, want.stats.cycles) << what;
  EXPECT_EQ(got.stats.max_stack_depth, want.stats.max_stack_depth) << what;
  EXPECT_EQ(got.stats.stack_empty_at_exit, want.stats.stack_empty_at_exit) << what;
  ASSERT_EQ(got.warps.size(), want.warps.size()) << what;
  for (std::size_t w = 0; w < want.warps.size(); ++w) {
    EXPECT_EQ(got.warps[w].regs, want.warps[w].regs) << what << " warp " << w;
    EXPECT_EQ(got.warps[w].pc, want.warps[w].pc) << what << " warp " << w;
    EXPECT_EQ(got.warps[w].mask, want.warps[w].mask) << what << " warp " << w;
  }
}

}  // namespace

TEST(VectorIsa, BaselineIsAlwaysThereAndAutoIsTheBest) {
  const auto isas = simt::supported_vector_isas();
  ASSERT_FALSE(isas.empty());
  EXPECT_EQ(isas.front(), VectorIsa::kBaseline);
  EXPECT_EQ(simt::best_vector_isa(), isas.back());
  EXPECT_TRUE(simt::vector_isa_supported(VectorIsa::kAuto));
  // What this test run covers, in the log.
  for (const VectorIsa isa : isas) std::printf("supported: %s\n", std::string(simt::vector_isa_name(isa)).c_str());
}

TEST(VectorIsa, EveryCopyOfTheLoopRunsEveryProgramAlike) {
  const auto isas = simt::supported_vector_isas();
  for (const simt::Program& program : programs()) {
    for (int variant = 0; variant < 5; ++variant) {
      Config c;
      c.warps = 3;
      c.policy = variant == 1 ? simt::SchedulingPolicy::kRoundRobin : simt::SchedulingPolicy::kGreedy;
      c.pitfalls.unmasked_writes = variant == 2;
      c.pitfalls.reconverge_at_target = variant == 3;
      c.pitfalls.jmp_reconverges = variant == 4;
      std::vector<std::string> trace_baseline;
      for (const VectorIsa isa : isas) {
        const std::string what = program.name + " variant " + std::to_string(variant) + " on " +
                                 std::string(simt::vector_isa_name(isa));
        Config base = c;
        base.isa = VectorIsa::kBaseline;
        Config here = c;
        here.isa = isa;
        // A run that faults must fault alike too (the pitfalls can send a warp astray).
        std::string want_error, got_error;
        simt::RunResult want, got;
        try { want = simt::run(program, base); } catch (const simt::SimtError& e) { want_error = e.what(); }
        try { got = simt::run(program, here); } catch (const simt::SimtError& e) { got_error = e.what(); }
        EXPECT_EQ(got_error, want_error) << what;
        if (want_error.empty()) expect_same(want, got, what);
        // The traced run takes the other instantiation of the loop.
        std::vector<std::string> trace;
        here.on_issue = [&](const simt::IssueEvent& e) {
          trace.push_back(std::to_string(e.cycle) + " " + std::to_string(e.warp) + " " + std::to_string(e.pc) + " " +
                          std::to_string(e.mask));
        };
        std::string traced_error;
        simt::RunResult traced;
        try { traced = simt::run(program, here); } catch (const simt::SimtError& e) { traced_error = e.what(); }
        EXPECT_EQ(traced_error, want_error) << what << " traced";
        if (want_error.empty()) expect_same(want, traced, what + " traced");
        if (isa == VectorIsa::kBaseline) trace_baseline = trace;
        EXPECT_EQ(trace, trace_baseline) << what;
      }
    }
  }
}

// A fault names the same lane and instruction on every copy.
TEST(VectorIsa, FaultsAreTheSameOnEveryCopy) {
  for (const char* src : {"TID r0\nSUB r1, r0, 3\nMOD r2, r0, r1\n", "TID r0\nADD r1, r0, 1000\nST r1, r0\n",
                          "TID r0\nSUB r1, r0, 9\nLD r2, r1\n", "L: JMP L\n"}) {
    std::vector<std::string> errors;
    for (const VectorIsa isa : simt::supported_vector_isas()) {
      Config c;
      c.isa = isa;
      c.max_issues = 1000;
      try {
        simt::run(simt::assemble(src, "f.simt"), c);
        errors.emplace_back("no fault");
      } catch (const simt::SimtError& e) {
        errors.emplace_back(e.what());
      }
    }
    EXPECT_NE(errors.front(), "no fault") << src;
    EXPECT_TRUE(std::all_of(errors.begin(), errors.end(), [&](const auto& e) { return e == errors.front(); })) << src;
  }
}

// A copy this CPU (or this build) cannot run is refused before anything runs,
// naming it; so is a value that names no copy at all.
TEST(VectorIsa, ACopyTheCpuCannotRunIsAUsageError) {
  const auto program = simt::load_builtin("uniform");
  for (const VectorIsa isa : {VectorIsa::kV3, VectorIsa::kV4, static_cast<VectorIsa>(9)}) {
    if (simt::vector_isa_supported(isa)) continue;
    Config c;
    c.isa = isa;
    try {
      simt::run(program, c);
      ADD_FAILURE() << "ran on " << simt::vector_isa_name(isa);
    } catch (const gpulab::UsageError& e) {
      EXPECT_NE(std::string(e.what()).find(std::string(simt::vector_isa_name(isa))), std::string::npos) << e.what();
    }
  }
}
