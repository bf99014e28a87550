// ptx-dissect: checks what nvcc did to four kernels (PTX idioms, FMA
// contraction, if-conversion, unrolling, spills, the fatbin, their SASS) and
// models what the driver loads on each GPU.
#include <fmt/format.h>

#include <filesystem>
#include <gpulab/cli.hpp>

#include "ptx_dissect/commands.hpp"

namespace {

constexpr std::string_view kProgram = "ptx-dissect";

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "ptx-dissect: checks what nvcc did to four kernels (PTX idioms, FMA, if-conversion, "
      "unrolling, spills,\n"
      "the fatbin) and which image the driver loads on each GPU. With no subcommand: the findings "
      "sheet."};
  app.require_subcommand(0, 1);
  gpulab::CommonOptions common;
  gpulab::add_json_flag(app, common);
  std::string artifacts = PTX_DISSECT_ARTIFACTS;
  auto* artifacts_opt =
      app.add_option("--artifacts", artifacts, "Directory with the nvcc outputs the build made")
          ->capture_default_str();
  std::string cuobjdump = PTX_DISSECT_CUOBJDUMP;
  app.add_option("--cuobjdump", cuobjdump,
                 "cuobjdump for the SASS rows (default: the one the build found; empty: SKIP)")
      ->capture_default_str();

  std::string fatbin;
  auto* load = app.add_subcommand("load-table", "Which cubin or PTX each GPU runs from a fatbin");
  load->add_option("--fatbin", fatbin,
                   "Read the contents from this fatbin (default: the curriculum's matrix)");
  gpulab::add_json_flag(*load, common);

  std::string ptx_file;
  auto* annotate =
      app.add_subcommand("annotate", "Print a PTX file with a one-line explanation per line");
  annotate->add_option("FILE", ptx_file, "A .ptx file")->required();

  std::string dryrun;
  auto* pipeline = app.add_subcommand(
      "pipeline", "What each step of nvcc's plan (nvcc -dryrun) does, temporary names normalised");
  pipeline->add_option(
      "--from", dryrun,
      "Read this saved nvcc -dryrun output (default: the build's, in --artifacts)");
  gpulab::add_json_flag(*pipeline, common);

  auto* clang_diff = app.add_subcommand(
      "clang-diff", "nvcc's PTX of the four kernels against clang's (LLVM NVPTX), kernel by kernel");
  gpulab::add_json_flag(*clang_diff, common);

  auto* cold_start = app.add_subcommand(
      "cold-start", "The new-GPU cold-start incident: what each of its three fixes changes at load");
  gpulab::add_json_flag(*cold_start, common);

  return gpulab::run_program(kProgram, app, argc, argv, [&]() -> int {
    // Missing artifacts are a skip only where the build made none (no nvcc); a directory the
    // user named that is not there is their mistake, not a missing toolkit.
    if (artifacts_opt->count() > 0 && !std::filesystem::is_directory(artifacts))
      throw gpulab::UsageError(fmt::format("--artifacts {}: no such directory", artifacts));
    if (*load) return ptx_dissect::run_load_table(fatbin, common.json);
    if (*clang_diff) return ptx_dissect::run_clang_diff(artifacts, common.json);
    if (*cold_start) return ptx_dissect::run_cold_start(artifacts, common.json);
    if (*pipeline) {
      if (dryrun.empty()) {
        dryrun = (std::filesystem::path(artifacts) / "nvcc-dryrun.txt").string();
        if (!std::filesystem::exists(dryrun))
          throw gpulab::Unsupported(fmt::format(
              "no {} (nvcc was not found when the lab was built; install the CUDA Toolkit)",
              dryrun));
      }
      return ptx_dissect::run_pipeline(dryrun, common.json);
    }
    if (*annotate) return ptx_dissect::run_annotate(ptx_file);
    return ptx_dissect::run_check(artifacts, cuobjdump, common.json);
  });
}
