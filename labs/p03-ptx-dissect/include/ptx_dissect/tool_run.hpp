// Runs one of NVIDIA's command-line tools (cuobjdump, nvcc -dryrun) and keeps
// what it printed. No shell: the arguments reach the tool as they are, so a
// path with a space or a quote cannot turn into another command.
#pragma once

#include <string>
#include <vector>

namespace ptx_dissect {

struct ToolRun {
  int exit_code = 0;   // the tool's exit status; 128+N when killed by signal N
  std::string output;  // stdout and stderr together, as a terminal shows them
};

// Output beyond this is an error: a SASS dump of these kernels is well under 2 MiB.
inline constexpr std::size_t kMaxToolOutputBytes = 64u << 20;

// argv[0] is the program's path. Throws gpulab::RunError naming the program when
// it cannot be started or prints more than kMaxToolOutputBytes.
ToolRun run_tool(const std::vector<std::string>& argv);

}  // namespace ptx_dissect
