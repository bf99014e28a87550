// Running a program: one or more warps, a shared word-addressed memory, and a
// scheduler that issues one warp instruction per cycle.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "gpulab/errors.hpp"
#include "simt/isa.hpp"
#include "simt/vector_isa.hpp"
#include "simt/warp.hpp"

namespace simt {

// The classic implementation bugs, switchable so their damage can be seen.
struct Pitfalls {
  bool reconverge_at_target = false;  // join at the branch target instead of the post-dominator
  bool unmasked_writes = false;       // inactive lanes commit register and memory writes
  bool jmp_reconverges = false;       // a JMP inside a divergent region pops the stack
};

enum class SchedulingPolicy {
  kGreedy,      // greedy-then-oldest: keep issuing the same warp until it stalls
  kRoundRobin,  // rotate to the next eligible warp after every issue
};

struct IssueEvent {
  std::uint64_t cycle;
  int warp;
  std::uint32_t pc;
  LaneMask mask;  // the active mask the instruction issued with
  const Instruction* instruction;
};

struct Config {
  int warps = 1;
  std::size_t mem_words = 1024;
  std::uint64_t max_issues = 1'000'000;
  int load_latency = 40;  // cycles a warp waits after issuing LD
  SchedulingPolicy policy = SchedulingPolicy::kGreedy;
  Pitfalls pitfalls;
  std::function<void(const IssueEvent&)> on_issue;  // --trace
  VectorIsa isa = VectorIsa::kAuto;  // which copy of the issue loop runs (tests pin each one)
};

struct RunStats {
  std::uint64_t issues = 0;       // warp instructions issued (whatever their mask)
  std::uint64_t lane_cycles = 0;  // sum of active lanes over all issues
  std::uint64_t cycles = 0;       // scheduler cycles, idle ones included
  std::uint64_t loads = 0;
  int max_stack_depth = 0;
  bool stack_empty_at_exit = true;

  // Nsight's "warp execution efficiency": lane-cycles / (issues * 32).
  [[nodiscard]] double util_pct() const;
  // Share of cycles in which the scheduler issued something.
  [[nodiscard]] double issue_util_pct() const;
};

struct RunResult {
  RunStats stats;
  std::vector<std::int64_t> mem;
  std::vector<Warp> warps;  // final state, for inspecting per-lane registers
};

// A fault of the simulated program (out-of-range address, divergent backward
// branch, runaway loop). Exit code 1, like any failed run.
struct SimtError : gpulab::RunError {
  using gpulab::RunError::RunError;
};

RunResult run(const Program& program, const Config& config = {});

}  // namespace simt
