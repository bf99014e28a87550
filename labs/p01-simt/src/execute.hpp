// The semantics of warp instructions, and the issue loop that runs them
// (internal to the library).
#pragma once

#include <cstdint>
#include <vector>

#include "decode.hpp"
#include "simt/machine.hpp"

namespace simt {

struct RunState {
  const Program& program;           // for fault messages and --trace
  const std::vector<DecodedOp>& code;
  std::vector<std::int64_t>& mem;
  const Config& config;
  RunStats& stats;
};

// Issues warp `w`'s instructions from `cycle` on, one per cycle, and returns
// the cycle after the last issue. With `stay` it keeps issuing while the warp
// stays eligible (its last instruction was not LD and it has not finished),
// which is exactly what the scheduler would pick next under greedy-then-oldest
// or with a single warp; without, it issues once. Throws SimtError on a fault
// or when max_issues is reached.
std::uint64_t issue_slice(Warp& w, bool stay, RunState& run, std::uint64_t cycle);

}  // namespace simt
