// The subcommands of ptx-dissect, one function each: read the artifacts, run
// the lab's logic, print a table (or JSON), return the exit status. Errors in
// what the user named throw gpulab::UsageError; artifacts the build could not
// make (no nvcc, no clang) throw gpulab::Unsupported (a skip).
#pragma once

#include <string>

namespace ptx_dissect {

int run_check(const std::string& artifacts, const std::string& cuobjdump, bool json);
int run_load_table(const std::string& fatbin_path, bool json);  // "" = the curriculum's matrix
int run_cold_start(const std::string& artifacts, bool json);
int run_pipeline(const std::string& dryrun_path, bool json);
int run_clang_diff(const std::string& artifacts, bool json);
int run_annotate(const std::string& ptx_path);

}  // namespace ptx_dissect
