#include "simt/divergence_report.hpp"

#include <algorithm>
#include <stdexcept>

namespace simt {

const KernelResult& DivergenceReport::get(std::string_view name) const {
  for (const auto& k : kernels)
    if (k.kernel->name == name) return k;
  throw std::out_of_range("no result for kernel " + std::string(name));
}

double DivergenceReport::slowdown(const KernelResult& k) const {
  const auto base = get("uniform").stats.issues;
  return base ? static_cast<double>(k.stats.issues) / static_cast<double>(base) : 0.0;
}

bool DivergenceReport::all_passed() const {
  return std::all_of(kernels.begin(), kernels.end(), [](const KernelResult& k) { return k.passed(); });
}

DivergenceReport run_divergence_report(const Config& config) {
  Config one_warp = config;
  one_warp.warps = 1;  // the benchmark is one warp of 32 threads
  DivergenceReport report;
  for (const auto& kernel : builtin_kernels()) {
    KernelResult r;
    r.kernel = &kernel;
    try {
      const RunResult run_result = run(load_builtin(kernel.name), one_warp);
      r.stats = run_result.stats;
      r.check = check_memory(kernel, run_result.mem);
      r.mem.assign(run_result.mem.begin(), run_result.mem.begin() + kernel.checked_words);
    } catch (const SimtError& e) {
      r.error = e.what();
    }
    report.kernels.push_back(std::move(r));
  }
  return report;
}

}  // namespace simt
