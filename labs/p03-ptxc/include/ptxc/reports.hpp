// What each ptxc command computes and how it prints: `compile` (one stage's
// text), `run` (each kernel's differential test, optionally against another
// PTX file and on a GPU) and the built-in suite, each a result struct rendered
// as the README's text by render() and as one JSON document by to_json().
// main.cpp reads the files, wires the flags and prints compiler diagnostics.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gpulab/json.hpp"
#include "ptxc/compiler.hpp"
#include "ptxc/differential.hpp"
#include "ptxc/ptx_module.hpp"
#include "ptxc/suite.hpp"

namespace ptxc {

struct RunFlags {
  int n = 1000;
  int block = 128;
  int level = 1;
  std::string target = "sm_75";
  bool no_guard = false;
};
// gpulab::UsageError for an --n or --block out of range.
void check_sizes(const RunFlags& f);
// The compiler's options at `level` for the flags' target and guard;
// gpulab::UsageError for an unknown target.
CompileOptions options_for(int level, const RunFlags& f);

// ptxc compile --emit STAGE (tokens, ast, ir, ptx, c): that stage's text.
// Throws CompileError for bad source.
std::string emit_stage(const std::string& source, const std::string& file, const std::string& stage,
                       const RunFlags& f);

// ---- ptxc run ----
struct RunRequest {
  std::string file;
  std::string kernel;                    // only this kernel; empty: all
  std::string against_path;              // --against FILE, for messages
  const ptx::Module* against = nullptr;  // its parsed PTX
  bool device = false;                   // also run on the GPU and compare bitwise
  RunFlags flags;
  std::uint64_t seed = 1;
};
struct KernelRun {
  std::string name;
  std::size_t instructions = 0;
  DiffResult diff;
  // --against: the entry's instruction count (when it has one), the comparison
  // as the table shows it, and the differing elements (when both ran).
  std::optional<std::size_t> against_instructions;
  std::string against;
  std::optional<std::size_t> against_differing;
  // --device: the GPU's name, the comparison, the differing elements (unless
  // the interpreter faulted).
  std::string gpu;
  std::string gpu_comparison;
  std::optional<std::size_t> gpu_differing;
};
struct RunReport {
  RunRequest request;
  std::vector<KernelRun> kernels;
  std::vector<std::string> failures;  // "FAIL kernel: why", in order
  [[nodiscard]] bool pass() const { return failures.empty(); }
};
// Throws gpulab::UsageError when request.kernel names no kernel of the file,
// gpulab::RunError when ptxc's own PTX does not parse (a compiler bug).
RunReport run_kernels(const Compilation& c, const RunRequest& request);
std::string render(const RunReport& r);
gpulab::Json to_json(const RunReport& r);

// ---- ptxc (no subcommand): the built-in suite at -O0 and -O1 ----
struct SuiteReport {
  SuiteRun run;
  RunFlags flags;
  std::uint64_t seed = 1;
  bool dump = false;  // the text starts with the -O1 PTX
  [[nodiscard]] std::size_t passed() const;
  [[nodiscard]] bool pass() const { return passed() == run.rows.size(); }
};
SuiteReport run_suite_report(const RunFlags& f, std::uint64_t seed, bool dump);
std::string render(const SuiteReport& r);
gpulab::Json to_json(const SuiteReport& r);

}  // namespace ptxc
