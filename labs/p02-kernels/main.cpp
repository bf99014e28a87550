// cuda-kernels: vec_add, then matmul from naive to register micro-tiles and
// cuBLAS, each verified against the CPU and timed with CUDA events.
#include <fmt/core.h>

#include <gpulab/cli.hpp>
#include <gpulab/file.hpp>
#include <gpulab/json.hpp>
#include <optional>

#include "kernels/pitfall_report.hpp"
#include "kernels/report.hpp"
#include "kernels/roofline_plot.hpp"

namespace {

constexpr const char* kProgram = "cuda-kernels";
// A saved --json run or a ptxas -v log is kilobytes; the cap refuses /dev/zero.
constexpr std::size_t kMaxReportBytes = std::size_t{16} << 20;

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "P02 Lab 01: vec_add and matmul (naive, tiled, micro-tiled, cuBLAS) on the GPU, each "
      "verified against a CPU\n"
      "reference and timed with CUDA events. Subcommands model, launch and ptxas need no GPU."};
  gpulab::CommonOptions common;
  kernels::MeasureOptions mo;
  gpulab::add_json_flag(app, common);
  gpulab::add_seed_flag(app, common);
  app.fallthrough();  // --json also after a subcommand: `cuda-kernels model --json`
  app.add_option("--n", mo.n, "Matmul size n (n x n floats), a multiple of 128 in [128, 16384]")
      ->capture_default_str();
  auto* vec_n_opt =
      app.add_option("--vec-n", mo.vec_n,
                     "vec_add elements, in [1, 2^28]; --no-tail-guard defaults it to (1<<20)+3")
          ->capture_default_str();
  app.add_option("--reps", mo.plan.reps,
                 "Timed repetitions per kernel (the median is reported), 1..1000")
      ->capture_default_str();
  app.add_option("--warmup", mo.plan.warmup, "Untimed warm-up launches per kernel, 0..100")
      ->capture_default_str();
  app.add_option("--kernels", mo.kernels,
                 "Comma-separated subset of: vec_add,naive,tiled,rect64x16,micro2x2,"
                 "micro4x4,micro8x8,micro8x8_lb,cublas (default: all)")
      ->delimiter(',');
  bool no_tail_guard = false;
  app.add_flag(
      "--no-tail-guard", no_tail_guard,
      "Guided breakage: launch vec_add without `if (i < n)` and report what it wrote past the end");
  app.add_flag("--exact-alloc", mo.exact_alloc,
               "Allocate exactly n floats (no canary slack): with --no-tail-guard a real "
               "out-of-bounds write for "
               "compute-sanitizer");
  app.add_flag("--drop-second-sync", mo.drop_second_sync,
               "Guided breakage: the tiled matmul without its second __syncthreads(); every run is "
               "verified");
  std::string pitfall;
  app.add_option("--pitfall", pitfall,
                 "Guided breakage: host-pointer (a kernel handed a host std::vector's address; which "
                 "call reports it, with and without CUDA_LAUNCH_BLOCKING=1)")
      ->check(CLI::IsMember({"host-pointer"}));
  app.add_option("--rtol", mo.tolerance.rtol,
                 "Relative tolerance of the elementwise check, 0..1 (0: bit equality, which GPU "
                 "FMAs break)")
      ->capture_default_str();
  bool enforce_gates = false;
  app.add_flag("--enforce-gates", enforce_gates,
               "Exit 1 when a performance gate fails (default: report only)");

  auto* model =
      app.add_subcommand("model", "The roofline model of every matmul kernel (no GPU needed)");
  int model_n = 1024;
  std::string gpu = "t4";
  model->add_option("--n", model_n, "Matrix size, a multiple of 128 in [128, 16384]")
      ->capture_default_str();
  model->add_option("--gpu", gpu, "Datasheet roof: t4, a100, h100 or h200")->capture_default_str();
  std::string plot_path, measured_path;
  model->add_option("--plot", plot_path, "Also draw the roofline into this SVG file (gnuplot)");
  model->add_option("--measured", measured_path,
                    "With --plot: overlay the TFLOP/s of a saved `cuda-kernels --json` run");

  auto* launch =
      app.add_subcommand("launch", "Grid arithmetic for N elements or a WxH image (no GPU needed)");
  std::string size = "1920x1080", block = "16x16";
  launch->add_option("--size", size, "Elements: N or WxH")->capture_default_str();
  launch->add_option("--block", block, "Block: threads or BXxBY")->capture_default_str();

  auto* ptxas =
      app.add_subcommand("ptxas", "Registers and spills ptxas reported for sm_90 at build time");
  std::string report_path = kernels::default_ptxas_report_path();
  ptxas->add_option("--report", report_path, "A saved `nvcc -Xptxas=-v` output to read instead");

  return gpulab::run_program(kProgram, app, argc, argv, [&]() -> int {
    auto check_n = [](int n) {
      if (n < 128 || n > 16384 || n % 128 != 0)
        throw gpulab::UsageError(
            fmt::format("--n {}: must be a multiple of 128 in [128, 16384]", n));
    };
    if (*model) {
      check_n(model_n);
      const auto roof = kernels::datasheet_roof(gpu);
      if (!roof)
        throw gpulab::UsageError(fmt::format("--gpu '{}': expected t4, a100, h100 or h200", gpu));
      if (!measured_path.empty() && plot_path.empty())
        throw gpulab::UsageError("--measured needs --plot FILE.svg");
      // Read before anything is printed: a bad file is an error, not half a report.
      std::optional<gpulab::Json> measured;
      if (!measured_path.empty()) {
        auto text = gpulab::read_text_file(measured_path, kMaxReportBytes);
        if (!text) throw gpulab::UsageError(fmt::format("--measured: {}", text.error().message));
        measured = gpulab::Json::parse(text.value(), nullptr, /*allow_exceptions=*/false);
        if (measured->is_discarded())
          throw gpulab::UsageError(fmt::format("--measured: '{}' is not JSON", measured_path));
      }
      if (common.json)
        gpulab::print_json(kernels::model_json(model_n, *roof));
      else
        fmt::print("{}", kernels::render_model(model_n, *roof));
      if (!plot_path.empty()) {
        gpulab::write_svg_plot(kernels::roofline_plot(*roof, measured ? &*measured : nullptr),
                               plot_path);
      }
      return gpulab::kExitOk;
    }
    if (*launch) {
      const auto [cfg, elements] = kernels::launch_for(size, block);
      if (common.json)
        gpulab::print_json(kernels::launch_json(cfg, elements));
      else
        fmt::print("{}", kernels::render_launch(cfg, elements));
      return kernels::launch_problem(cfg).empty() ? gpulab::kExitOk : gpulab::kExitCheckFailed;
    }
    if (*ptxas) {
      if (report_path.empty())
        throw gpulab::Unsupported(
            "this build has no CUDA compiler, so ptxas never ran (no register report)");
      auto text = gpulab::read_text_file(report_path, kMaxReportBytes);
      if (!text) throw gpulab::UsageError(fmt::format("--report: {}", text.error().message));
      const auto entries = kernels::parse_ptxas_report(text.value());
      if (entries.empty())
        throw gpulab::UsageError(fmt::format("'{}' holds no ptxas -v kernel entries", report_path));
      if (common.json)
        gpulab::print_json(kernels::ptxas_json(entries));
      else
        fmt::print("{}", kernels::render_ptxas(entries));
      return gpulab::kExitOk;
    }

    if (!pitfall.empty()) {  // host-pointer, the only one CLI11 lets through
      const auto run = kernels::run_host_pointer_pitfall(std::size_t{1} << 20);
      if (common.json)
        gpulab::print_json(kernels::host_pointer_json(run));
      else
        fmt::print("{}", kernels::render_host_pointer(run));
      return gpulab::kExitOk;
    }
    check_n(mo.n);
    mo.tail_guard = !no_tail_guard;
    if (no_tail_guard && vec_n_opt->count() == 0)
      mo.vec_n = (1u << 20) + 3;  // not 1<<20+3, which is 1<<23
    if (mo.vec_n < 1 || mo.vec_n > (1ull << 28))
      throw gpulab::UsageError(fmt::format("--vec-n {}: must be in [1, 268435456]", mo.vec_n));
    if (!(mo.tolerance.rtol >= 0 && mo.tolerance.rtol <= 1))
      throw gpulab::UsageError(fmt::format("--rtol {}: must be in [0, 1]", mo.tolerance.rtol));
    if (mo.tolerance.rtol == 0) mo.tolerance.atol = 0;  // bit equality means it
    if (mo.plan.reps < 1 || mo.plan.reps > 1000)
      throw gpulab::UsageError("--reps: must be in [1, 1000]");
    if (mo.plan.warmup < 0 || mo.plan.warmup > 100)
      throw gpulab::UsageError("--warmup: must be in [0, 100]");
    const auto names = kernels::kernel_names();
    for (const auto& k : mo.kernels)
      if (std::find(names.begin(), names.end(), k) == names.end())
        throw gpulab::UsageError(fmt::format("--kernels: unknown kernel '{}'", k));
    mo.seed = common.seed;

    const kernels::MeasureReport rep = kernels::measure(mo);
    if (common.json)
      gpulab::print_json(kernels::to_json(rep));
    else
      fmt::print("{}", kernels::render(rep));
    if (!rep.all_checks_pass()) return gpulab::kExitCheckFailed;
    if (enforce_gates && !rep.all_gates_pass()) return gpulab::kExitCheckFailed;
    return gpulab::kExitOk;
  });
}
