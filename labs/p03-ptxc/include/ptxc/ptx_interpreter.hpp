// Executes a parsed PTX entry the way the GPU would for a 1-D launch, one
// thread after another: each thread gets its own registers and special
// registers (%tid.x, %ntid.x, %ctaid.x, %nctaid.x), f32 arithmetic rounds to
// f32 after every instruction (fma once), and every global access goes
// through bounds-checked GlobalMemory. Elementwise kernels have no barriers
// and no inter-thread communication, so sequential threads are exact.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <vector>

#include "ptxc/global_memory.hpp"
#include "ptxc/ptx_module.hpp"

namespace ptxc {

struct LaunchConfig {
  int grid = 1;   // blocks
  int block = 1;  // threads per block
};

struct LaunchStats {
  std::uint64_t threads = 0;
  std::uint64_t instructions = 0;  // dynamically executed, all threads
};

// A thread that did something the machine cannot: runs past the step limit,
// reads an unset parameter. (Memory faults are MemoryFault.)
struct ExecError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

inline constexpr std::uint64_t kMaxStepsPerThread = 1'000'000;

// `params` holds one raw value per .param of the entry (an f32 as its bits, a
// pointer as its address). Throws MemoryFault (with .thread set, and the
// message naming thread and block) or ExecError.
LaunchStats launch(const ptx::Entry& entry, const std::vector<std::uint64_t>& params,
                   LaunchConfig config, GlobalMemory& memory);

}  // namespace ptxc
