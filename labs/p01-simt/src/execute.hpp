// The semantics of warp instructions, and the issue loop that runs them
// (internal to the library).
#pragma once

#include <cstdint>
#include <vector>

#include "decode.hpp"
#include "simt/machine.hpp"
#include "simt/vector_isa.hpp"

namespace simt {

struct RunState {
  const Program& program;              // for fault messages and --trace
  const std::vector<DecodedOp>& code;  // program.code decoded, then one Kind::kEnd
  std::vector<std::int64_t>& mem;
  const Config& config;
  RunStats& stats;
  VectorIsa isa;  // resolved: never kAuto
};

// Issues warp `w`'s instructions from `cycle` on, one per cycle, and returns
// the cycle after the last issue. With `stay` it keeps issuing while the warp
// stays eligible (its last instruction was not LD and it has not finished),
// which is exactly what the scheduler would pick next under greedy-then-oldest
// or with a single warp; without, it issues once. Throws SimtError on a fault
// or when max_issues is reached. Runs the copy of the loop compiled for
// `run.isa`, and a leaner one when there is no trace hook and no pitfall.
std::uint64_t issue_slice(Warp& w, bool stay, RunState& run, std::uint64_t cycle);

}  // namespace simt
