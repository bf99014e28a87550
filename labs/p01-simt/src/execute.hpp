// The semantics of one warp instruction (internal to the library).
#pragma once

#include <cstdint>
#include <vector>

#include "simt/machine.hpp"

namespace simt {

// Executes warp.pc's instruction with warp.mask, updates pc/mask/stack, and
// returns the number of cycles before the warp may issue again (1, or
// 1 + load latency after LD). Throws SimtError on a fault.
std::uint64_t execute(Warp& warp, const Program& program, std::vector<std::int64_t>& mem, const Config& config);

}  // namespace simt
