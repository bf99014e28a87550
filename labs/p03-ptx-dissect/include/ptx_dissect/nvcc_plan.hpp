// Reads the plan `nvcc -dryrun` prints (one "#$ command" line per step, after
// "#$ NAME=value" settings) and says what each step does: the curriculum's
// cudafe++ / cicc / ptxas / fatbinary pipeline, seen in nvcc's own words.
// Temporary files (/tmp/tmpxft_0000744b_00000000-7_kernels.compute_80.ptx)
// are shown without their directory and per-run prefix (kernels.compute_80.ptx)
// so the same build prints the same plan on every run.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace ptx_dissect {

struct PlanStep {
  std::string tool;                 // "cicc", "ptxas", "gcc"
  std::string stage;                // "device C++ -> NVVM IR -> PTX for compute_80"
  std::vector<std::string> reads;   // normalised file names
  std::vector<std::string> writes;  // normalised file names
};

// Throws std::runtime_error when the text holds no step at all.
std::vector<PlanStep> parse_nvcc_dryrun(std::string_view text);

// The "$ nvcc ..." line the build writes above nvcc's output, or "" without one.
std::string recorded_command(std::string_view text);

// "/tmp/tmpxft_0000744b_00000000-7_kernels.compute_80.ptx" -> "kernels.compute_80.ptx";
// any other path -> its file name.
std::string normalise_temp_path(std::string_view path);

// The words of one command line, double quotes removed ("a b" is one word).
std::vector<std::string> split_command(std::string_view line);

}  // namespace ptx_dissect
