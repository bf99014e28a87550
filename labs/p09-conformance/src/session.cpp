#include "conformance/session.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <thread>

#include "conformance/hal_target.hpp"
#include "gpulab/errors.hpp"
#include "gpulab/progress.hpp"
#include "hal/hal.hpp"
#include "hal/openblas_core.hpp"

namespace hal = gpulab::hal;

namespace conformance {
namespace {

bool contains(const std::vector<std::string>& names, std::string_view n) {
  return std::find(names.begin(), names.end(), n) != names.end();
}

std::string rejection_text(const hal::Rejection& r) {
  return fmt::format("{} ({})", r.message, hal::reject_reason_name(r.reason));
}

}  // namespace

Report run_session(const SessionOptions& opts) {
  if (opts.backend_dir && !std::filesystem::is_directory(*opts.backend_dir))
    throw gpulab::UsageError(
        fmt::format("--backend-dir {}: not a directory", opts.backend_dir->string()));
  hal::Registry reg(opts.backend_dir ? hal::DiscoveryOptions::only_dir(*opts.backend_dir)
                                     : hal::DiscoveryOptions::from_environment());

  // Every name the user gave must be one the loader saw.
  std::vector<std::string> known;
  for (const auto& b : reg.backends()) known.emplace_back(b->name());
  for (const auto& r : reg.rejected()) known.push_back(r.name);
  for (const auto* list : {&opts.only, &opts.skip})
    for (const auto& name : *list)
      if (!contains(known, name)) {
        std::string seen;
        for (const auto& k : known) seen += (seen.empty() ? "" : ", ") + k;
        throw gpulab::UsageError(fmt::format("no backend named '{}' was found (found: {})", name,
                                             seen.empty() ? "none" : seen));
      }
  auto selected = [&](std::string_view name) {
    return (opts.only.empty() || contains(opts.only, name)) && !contains(opts.skip, name);
  };

  Report report;
  report.core_abi = fmt::format("{}.{}", GPULAB_HAL_ABI_MAJOR, GPULAB_HAL_ABI_MINOR);
  report.seed = opts.matrix.seed;
  report.large = opts.matrix.large;
  for (const auto& r : reg.rejected())
    if (selected(r.name)) report.rejected.push_back({r.name, rejection_text(r)});

  std::vector<std::unique_ptr<HalTarget>> targets;
  for (const auto& b : reg.backends())
    if (selected(b->name())) targets.push_back(std::make_unique<HalTarget>(*b));
  if (targets.empty())
    throw gpulab::RunError(
        reg.backends().empty()
            ? "no HAL backend loaded: nothing to test (build p09-hal, or see --backend-dir)"
            : "every loaded backend was deselected: nothing to test");

  const std::vector<PreparedCase> cases = prepare(build_matrix(opts.matrix));
  report.capabilities = capabilities_of(cases);
  report.cases_per_backend = cases.size();
  {
    gpulab::Progress progress("conformance", targets.size() * cases.size());
    std::size_t done = 0;
    for (auto& t : targets)
      report.backends.push_back(
          run_backend(*t, cases, [&](const CaseResult&) { progress.update(++done); }));
  }

  if (opts.perf) {
    PerfSummary& perf = report.perf;
    perf.run = true;
    perf.size = opts.perf_size;
    perf.threshold = opts.threshold;
    const std::uint64_t n = opts.perf_size;
    // The reference: the vendor-library backend if it loaded and (when tested) conforms.
    const hal::Backend* ref = reg.find(opts.reference);
    if (ref) {
      for (const auto& b : report.backends)
        if (b.info.name == opts.reference && !b.conformant()) ref = nullptr;
    }
    std::optional<double> ref_seconds;
    if (ref) {
      HalTarget ref_target(*ref);
      ref_seconds = ref_target.time_matmul(n, n, n, opts.perf_reps);
    }
    if (ref_seconds) {
      perf.roof = {opts.reference, matmul_gflops(n, n, n, *ref_seconds), "", true};
      if (const std::string core = hal::openblas_core_in_device(ref->device()); !core.empty()) {
        const hal::OpenblasCoreVerdict v = hal::judge_openblas_core(core, hal::this_cpu_features());
        perf.roof.peer = v.describe();
        perf.roof.peer_fair = v.kind == hal::OpenblasCoreVerdict::Kind::kFair;
      }
    } else {
      const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
      perf.roof = {fmt::format("FMA roof ({} thread{}; no conforming {} backend)", threads,
                               threads == 1 ? "" : "s", opts.reference),
                   measure_fma_roof_gflops(threads, 0.05), "", true};
    }
    perf.entries.resize(report.backends.size());
    for (std::size_t i = 0; i < report.backends.size(); ++i) {
      PerfEntry& e = perf.entries[i];
      const BackendResult& b = report.backends[i];
      if (!b.conformant()) {
        e.note = "fails conformance";
        continue;
      }
      if (!b.info.declares(Op::kMatmul, DType::kF32)) {
        e.note = "no F32 matmul";
        continue;
      }
      if (b.info.max_dim != 0 && n > b.info.max_dim) {
        e.note = fmt::format("{} > max_dim {}", n, b.info.max_dim);
        continue;
      }
      if (b.info.name == opts.reference && ref_seconds) {
        e.gflops = perf.roof.gflops;  // the reference is its own 100%
        continue;
      }
      if (auto s = targets[i]->time_matmul(n, n, n, opts.perf_reps))
        e.gflops = matmul_gflops(n, n, n, *s);
      else
        e.note = "timing run failed";
    }
    assign_tiers(report);
  }
  return report;
}

}  // namespace conformance
