// The curriculum's experiment: run every shipped kernel on one warp and
// measure what divergence costs (issues, util%, slowdown vs uniform), and
// check each kernel's per-lane results and stack discipline.
#pragma once

#include <string>
#include <vector>

#include "simt/kernels.hpp"
#include "simt/machine.hpp"

namespace simt {

struct KernelResult {
  const BuiltinKernel* kernel = nullptr;
  RunStats stats;
  LaneCheck check;
  std::vector<std::int64_t> mem;  // mem[0, checked_words)
  std::string error;              // a runtime fault, if the kernel did not finish
  [[nodiscard]] bool passed() const { return error.empty() && check.ok() && stats.stack_empty_at_exit; }
};

struct DivergenceReport {
  std::vector<KernelResult> kernels;  // in builtin_kernels() order
  [[nodiscard]] const KernelResult& get(std::string_view name) const;
  // issues / issues(uniform): the curriculum's slowdown column.
  [[nodiscard]] double slowdown(const KernelResult& k) const;
  [[nodiscard]] bool all_passed() const;
};

// The four kernels of the curriculum's table, in its order.
inline constexpr std::string_view kTableKernels[] = {"uniform", "warp_uniform", "even_odd", "max_divergent"};

DivergenceReport run_divergence_report(const Config& config);

}  // namespace simt
