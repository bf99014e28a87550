// coalescing-bench: the stride cliff, AoS vs SoA, float4 copies and the
// transpose ladder, measured next to what the sector and bank models predict.
#include <fmt/core.h>

#include <algorithm>
#include <fstream>
#include <gpulab/cli.hpp>
#include <gpulab/file.hpp>
#include <gpulab/json.hpp>
#include <optional>

#include "coalescing/report.hpp"
#include "coalescing/stride_plot.hpp"

namespace {
constexpr const char* kProgram = "coalescing-bench";

void check_transpose_n(int n) {
  if (n < 32 || n > 32768 || n % 32 != 0)
    throw gpulab::UsageError(
        fmt::format("--transpose-n {}: must be a multiple of 32 in [32, 32768]", n));
}
}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "P02 Lab 02: global-memory coalescing (stride, AoS/SoA, float4) and shared-memory bank "
      "conflicts (transpose),\n"
      "measured with CUDA events next to the sector/bank model. Subcommand model needs no GPU."};
  gpulab::CommonOptions common;
  coalescing::BenchOptions o;
  gpulab::add_json_flag(app, common);
  app.fallthrough();  // --json also after a subcommand
  app.add_option("--buffer-mb", o.buffer_mb,
                 "Buffer size for stride, float4 and AoS/SoA runs in MiB, 1..4096")
      ->capture_default_str();
  app.add_option("--transpose-n", o.transpose_n,
                 "Transpose matrix size, a multiple of 32 in [32, 32768]")
      ->capture_default_str();
  app.add_option("--reps", o.plan.reps,
                 "Timed repetitions per kernel (the median is reported), 1..1000")
      ->capture_default_str();
  app.add_option("--warmup", o.plan.warmup, "Untimed warm-up launches per kernel, 0..100")
      ->capture_default_str();
  app.add_option("--only", o.only,
                 "Comma-separated sections: stride,aos,float4,transpose (default: all)")
      ->delimiter(',');
  bool enforce_gates = false;
  app.add_flag("--enforce-gates", enforce_gates,
               "Exit 1 when the performance gate fails (default: report only)");

  auto* model = app.add_subcommand(
      "model", "Sectors per request, bank conflicts and predicted ratios (no GPU)");
  int model_n = 8192;
  model->add_option("--transpose-n", model_n, "Transpose matrix size for the ladder's model")
      ->capture_default_str();
  std::string plot_path, measured_path;
  model->add_option("--plot", plot_path, "Also draw the stride cliff into this SVG file (gnuplot)");
  model->add_option("--measured", measured_path,
                    "With --plot: overlay a saved `coalescing-bench --json` run");

  return gpulab::run_program(kProgram, app, argc, argv, [&]() -> int {
    if (*model) {
      check_transpose_n(model_n);
      if (!measured_path.empty() && plot_path.empty())
        throw gpulab::UsageError("--measured needs --plot FILE.svg");
      if (common.json)
        gpulab::print_json(coalescing::model_json(model_n));
      else
        fmt::print("{}", coalescing::render_model(model_n));
      if (!plot_path.empty()) {
        std::optional<gpulab::Json> measured;
        if (!measured_path.empty()) {
          // A saved --json report is a few KiB; 16 MiB refuses /dev/zero and endless pipes.
          auto text = gpulab::read_text_file(measured_path, 16u << 20);
          if (!text) throw gpulab::UsageError(fmt::format("--measured: {}", text.error().message));
          measured = gpulab::Json::parse(text.value(), nullptr, /*allow_exceptions=*/false);
          if (measured->is_discarded())
            throw gpulab::UsageError(fmt::format("--measured: '{}' is not JSON", measured_path));
        }
        gpulab::write_svg_plot(coalescing::stride_plot(measured ? &*measured : nullptr), plot_path);
      }
      return gpulab::kExitOk;
    }
    if (o.buffer_mb < 1 || o.buffer_mb > 4096)
      throw gpulab::UsageError(fmt::format("--buffer-mb {}: must be in [1, 4096]", o.buffer_mb));
    check_transpose_n(o.transpose_n);
    if (o.plan.reps < 1 || o.plan.reps > 1000)
      throw gpulab::UsageError("--reps: must be in [1, 1000]");
    if (o.plan.warmup < 0 || o.plan.warmup > 100)
      throw gpulab::UsageError("--warmup: must be in [0, 100]");
    for (const auto& s : o.only)
      if (std::find(coalescing::kSections.begin(), coalescing::kSections.end(), s) ==
          coalescing::kSections.end())
        throw gpulab::UsageError(
            fmt::format("--only: unknown section '{}' (stride, aos, float4, transpose)", s));

    const coalescing::BenchReport rep = coalescing::run_bench(o);
    if (common.json)
      gpulab::print_json(coalescing::to_json(rep));
    else
      fmt::print("{}", coalescing::render(rep));
    if (!rep.all_checks_pass()) return gpulab::kExitCheckFailed;
    if (enforce_gates && !rep.all_gates_pass()) return gpulab::kExitCheckFailed;
    return gpulab::kExitOk;
  });
}
