// Reads what `ptxas -v` (nvcc -Xptxas=-v) prints per function: registers,
// stack frame, spill bytes, and the warning when -maxrregcount is raised to
// the architecture's lower bound (16 -> 24 on sm_80).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace ptx_dissect {

struct FunctionResources {
  int registers = -1;
  int stack_frame_bytes = 0;
  int spill_store_bytes = 0;
  int spill_load_bytes = 0;
};

struct RegisterClamp {
  std::string arch;   // "sm_80"
  int requested = 0;  // 16
  int applied = 0;    // 24
};

struct PtxasReport {
  std::map<std::string, FunctionResources, std::less<>> functions;
  std::optional<RegisterClamp> clamp;
};

// Throws std::runtime_error if the text holds no function at all.
PtxasReport parse_ptxas_report(std::string_view text);

}  // namespace ptx_dissect
