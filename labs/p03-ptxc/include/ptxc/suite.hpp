// The built-in suite `ptxc` runs with no arguments: the curriculum's five
// kernels (saxpy, scale2, vadd, lerp, a multi-statement kernel) and one kernel
// per extension (min/max, constant folding, CSE, fused relu, sqrt).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "ptxc/differential.hpp"
#include "ptxc/ptx_emitter.hpp"

namespace ptxc {

// One source file holding every suite kernel, in table order.
std::string_view builtin_suite_source();

struct SuiteRow {
  std::string kernel;
  std::size_t instructions_o0 = 0;
  std::size_t instructions_o1 = 0;
  DiffResult o0;  // the differential test of the -O0 PTX
  DiffResult o1;
  [[nodiscard]] bool pass() const { return o0.pass && o1.pass; }
};

struct SuiteRun {
  std::string ptx_o1;  // the -O1 module (ptxc --dump)
  std::vector<SuiteRow> rows;
};

// Compiles the suite at -O0 and -O1 with `emit` (target, guard) and runs the
// differential test of every kernel at both levels.
SuiteRun run_suite(const DiffOptions& opts, const EmitOptions& emit);

}  // namespace ptxc
