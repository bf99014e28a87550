// hal-conformance: one test matrix, every backend the HAL loaded. Declared
// capabilities are tested, not trusted; exit 1 when any of them is wrong.
#include <fmt/core.h>

#include <cstdio>

#include "conformance/report.hpp"
#include "conformance/session.hpp"
#include "gpulab/cli.hpp"
#include "gpulab/flag_checks.hpp"
#include "gpulab/json.hpp"
#include "gpulab/output_file.hpp"

namespace {

constexpr std::string_view kProgram = "hal-conformance";

// Checked before the run, so a bad path fails in a moment, not after the matrix; the
// report itself replaces the old one only once it is complete (a full disk keeps the old one).
void check_junit_path(const std::string& path) {
  if (auto ok = gpulab::check_output_path(path); !ok) {
    throw gpulab::UsageError(fmt::format("--junit: {}", ok.error().message));
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "hal-conformance: runs one test matrix (op x dtype x shape) on every backend the HAL loaded, "
      "verifies\n"
      "each declared capability against a double-precision reference, and grades each backend's "
      "speed."};
  conformance::SessionOptions opts;
  bool json = false;
  bool verbose = false;
  bool no_perf = false;
  double threshold_pct = 50;
  std::string junit;
  std::string backend_dir;
  std::vector<std::string> op_names, dtype_names;

  app.add_option("--backend", opts.only, "Test only these backends (repeat, or comma-separated)")
      ->delimiter(',')
      ->type_name("NAME");
  app.add_option("--skip", opts.skip, "Do not test these backends (repeat, or comma-separated)")
      ->delimiter(',')
      ->type_name("NAME");
  app.add_option("--backend-dir", backend_dir,
                 "Load only the backends in DIR (default: GPULAB_HAL_BACKENDS, manifests, the "
                 "build's backends)")
      ->type_name("DIR");
  app.add_option("--op", op_names,
                 "Only these ops: buffer, matmul, softmax, rmsnorm, rope, silu_mul, paged_attention "
                 "(default: all)")
      ->delimiter(',')
      ->check([](const std::string& s) {
        return conformance::parse_op(s) ? std::string()
                                        : "unknown op '" + s +
                                              "' (buffer, matmul, softmax, rmsnorm, rope, silu_mul, paged_attention)";
      });
  app.add_option("--dtype", dtype_names, "Only these dtypes: F32, F16, BF16, FP8 (default: all)")
      ->delimiter(',')
      ->check([](const std::string& s) {
        return conformance::parse_dtype(s) ? std::string()
                                           : "unknown dtype '" + s + "' (F32, F16, BF16, FP8)";
      });
  app.add_flag("--large", opts.matrix.large,
               "Add the large shapes (up to 1024; seconds on slow backends)");
  app.add_option("--seed", opts.matrix.seed,
                 "Seed of the inputs (each case mixes in its own identity)")
      ->capture_default_str();
  app.add_flag("--no-perf", no_perf, "Skip the performance tier (correctness only)");
  app.add_option("--perf-size", opts.perf_size,
                 "n of the n x n x n F32 matmul the tier is measured on")
      ->capture_default_str()
      ->check(CLI::Range(std::uint64_t{16}, std::uint64_t{4096}));
  app.add_option("--perf-reps", opts.perf_reps, "Timed runs per backend (minimum is reported)")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000));
  app.add_option("--tier-threshold", threshold_pct,
                 "Percent of the reference a backend needs for 'certified', 0..1000")
      ->capture_default_str()
      ->check(gpulab::finite_in(0, 1000));
  app.add_option("--reference", opts.reference,
                 "Backend whose F32 matmul is 100% (falls back to the FMA roof)")
      ->capture_default_str();
  app.add_flag("--verbose", verbose,
               "One FAIL line per failing case (default: one per failing capability)");
  app.add_option("--junit", junit, "Also write the results as JUnit XML to FILE (for CI)")
      ->type_name("FILE");
  app.add_flag("--json", json, "Print the results as one JSON document");

  return gpulab::run_program(kProgram, app, argc, argv, [&] {
    if (!backend_dir.empty()) opts.backend_dir = backend_dir;
    if (!op_names.empty()) {
      opts.matrix.ops.clear();
      for (const auto& n : op_names) opts.matrix.ops.push_back(*conformance::parse_op(n));
    }
    if (!dtype_names.empty()) {
      opts.matrix.dtypes.clear();
      for (const auto& n : dtype_names) opts.matrix.dtypes.push_back(*conformance::parse_dtype(n));
    }
    opts.perf = !no_perf;
    opts.threshold = threshold_pct / 100.0;

    if (!junit.empty()) check_junit_path(junit);
    const conformance::Report report = conformance::run_session(opts);
    if (!junit.empty()) {
      if (auto written = gpulab::write_file(junit, conformance::to_junit_xml(report)); !written) {
        throw gpulab::RunError(fmt::format("--junit: {}", written.error().message));
      }
    }
    if (json) {
      gpulab::print_json(conformance::to_json(report));
    } else {
      conformance::TextOptions text;
      text.every_failure = verbose;
      fmt::print("{}", conformance::render_text(report, text));
    }
    return report.all_declared_pass() ? gpulab::kExitOk : gpulab::kExitCheckFailed;
  });
}
