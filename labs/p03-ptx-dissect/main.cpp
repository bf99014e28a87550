// ptx-dissect: checks what nvcc did to four kernels (PTX idioms, FMA
// contraction, if-conversion, unrolling, spills, the fatbin, their SASS) and
// models what the driver loads on each GPU.
#include <fmt/format.h>

#include <filesystem>
#include <gpulab/cli.hpp>
#include <gpulab/file.hpp>
#include <gpulab/json.hpp>
#include <gpulab/table.hpp>

#include "ptx_dissect/annotate.hpp"
#include "ptx_dissect/cold_start.hpp"
#include "ptx_dissect/cross_compiler.hpp"
#include "ptx_dissect/fatbin.hpp"
#include "ptx_dissect/findings.hpp"
#include "ptx_dissect/load_decision.hpp"
#include "ptx_dissect/nvcc_plan.hpp"
#include "ptx_dissect/ptx_text.hpp"

namespace {

constexpr std::string_view kProgram = "ptx-dissect";

std::string read_file(const std::string& path, std::size_t limit) {
  auto text = gpulab::read_text_file(path, limit);
  if (!text) throw gpulab::UsageError(text.error().message);
  return std::move(text).value();
}

ptx_dissect::FatbinManifest read_manifest(const std::string& path, std::uint64_t& bytes_out) {
  const std::string bytes = read_file(path, 256u << 20);
  std::vector<ptx_dissect::FatbinEntry> entries;
  try {
    entries = ptx_dissect::parse_fatbin(
        std::span(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()));
  } catch (const std::runtime_error& e) {
    throw gpulab::UsageError(fmt::format("{}: {}", path, e.what()));
  }
  ptx_dissect::FatbinManifest manifest;
  for (const auto& e : entries)
    (e.kind == ptx_dissect::FatbinEntry::Kind::kElf ? manifest.sass : manifest.ptx)
        .push_back(e.arch);
  bytes_out = bytes.size();
  return manifest;
}

int cmd_check(const std::string& artifacts, const std::string& cuobjdump,
              const gpulab::CommonOptions& common) {
  const auto findings = ptx_dissect::run_all_checks(artifacts, cuobjdump);
  int fails = 0;
  int skips = 0;
  gpulab::Table table;
  table.column("kernel", gpulab::Table::Align::kLeft)
      .column("what to find", gpulab::Table::Align::kLeft)
      .column("found", gpulab::Table::Align::kLeft)
      .column("result", gpulab::Table::Align::kLeft);
  gpulab::Json rows = gpulab::Json::array();
  for (const auto& f : findings) {
    fails += f.status == ptx_dissect::Finding::Status::kFail;
    skips += f.status == ptx_dissect::Finding::Status::kSkip;
    table.row({f.kernel, f.check, f.found, std::string(ptx_dissect::status_name(f.status))});
    rows.push_back({{"kernel", f.kernel},
                    {"check", f.check},
                    {"found", f.found},
                    {"result", ptx_dissect::status_name(f.status)}});
  }
  const auto passed = static_cast<int>(findings.size()) - fails - skips;
  if (common.json) {
    gpulab::print_json(
        {{"findings", rows}, {"passed", passed}, {"failed", fails}, {"skipped", skips}});
  } else {
    fmt::print("{}", table.render());
    fmt::print("{} checks: {} PASS, {} FAIL, {} SKIP\n", findings.size(), passed, fails, skips);
  }
  return fails == 0 ? gpulab::kExitOk : gpulab::kExitCheckFailed;
}

int cmd_load_table(const std::string& fatbin_path, const gpulab::CommonOptions& common) {
  ptx_dissect::FatbinManifest manifest = ptx_dissect::curriculum_matrix();
  std::string source = "the curriculum's -gencode matrix";
  if (!fatbin_path.empty()) {
    std::uint64_t bytes = 0;
    manifest = read_manifest(fatbin_path, bytes);
    source = fatbin_path;
  }
  std::string contents;
  for (const int a : manifest.sass)
    contents += fmt::format("{}sm_{} SASS", contents.empty() ? "" : ", ", a);
  for (const int a : manifest.ptx)
    contents += fmt::format("{}compute_{} PTX", contents.empty() ? "" : ", ", a);
  gpulab::Table table;
  table.column("GPU", gpulab::Table::Align::kLeft)
      .column("arch", gpulab::Table::Align::kLeft)
      .column("at load", gpulab::Table::Align::kLeft)
      .column("why", gpulab::Table::Align::kLeft);
  gpulab::Json rows = gpulab::Json::array();
  for (const auto& gpu : ptx_dissect::reference_gpus()) {
    const auto d = ptx_dissect::decide_load(manifest, gpu.arch);
    std::string action;
    switch (d.action) {
      case ptx_dissect::LoadDecision::Action::kRunSass:
        action = fmt::format("run sm_{} SASS", d.image_arch);
        break;
      case ptx_dissect::LoadDecision::Action::kJitPtx:
        action = fmt::format("JIT compute_{} PTX", d.image_arch);
        break;
      case ptx_dissect::LoadDecision::Action::kFail:
        action = "load fails";
        break;
    }
    table.row({gpu.name, fmt::format("sm_{}", gpu.arch), action, d.explanation});
    rows.push_back(
        {{"gpu", gpu.name}, {"arch", gpu.arch}, {"action", action}, {"why", d.explanation}});
  }
  if (common.json) {
    gpulab::print_json({{"fatbin", source}, {"contents", contents}, {"decisions", rows}});
  } else {
    fmt::print("fatbin ({}): {}\n\n{}", source, contents, table.render());
  }
  return gpulab::kExitOk;
}

int cmd_pipeline(const std::string& path, const gpulab::CommonOptions& common) {
  const std::string text = read_file(path, 1u << 20);
  std::vector<ptx_dissect::PlanStep> steps;
  try {
    steps = ptx_dissect::parse_nvcc_dryrun(text);
  } catch (const std::runtime_error& e) {
    throw gpulab::UsageError(fmt::format("{}: {}", path, e.what()));
  }
  const auto join = [](const std::vector<std::string>& v) {
    std::string out;
    for (const auto& x : v) out += (out.empty() ? "" : ", ") + x;
    return out;
  };
  std::string command = ptx_dissect::recorded_command(text);
  if (command.empty()) command = "nvcc -dryrun";
  gpulab::Table table;
  table.column("step")
      .column("tool", gpulab::Table::Align::kLeft)
      .column("what it does", gpulab::Table::Align::kLeft)
      .column("reads", gpulab::Table::Align::kLeft)
      .column("writes", gpulab::Table::Align::kLeft);
  gpulab::Json rows = gpulab::Json::array();
  for (std::size_t k = 0; k < steps.size(); ++k) {
    const auto& s = steps[k];
    table.row({std::to_string(k + 1), s.tool, s.stage, join(s.reads), join(s.writes)});
    rows.push_back(
        {{"tool", s.tool}, {"stage", s.stage}, {"reads", s.reads}, {"writes", s.writes}});
  }
  if (common.json) {
    gpulab::print_json({{"command", command}, {"steps", rows}});
  } else {
    fmt::print("{}: {} steps\n\n{}", command, steps.size(), table.render());
  }
  return gpulab::kExitOk;
}

// The cold-start incident's three fixes, on the build's real fatbins (today's and fix 1's).
int cmd_cold_start(const std::string& artifacts, const gpulab::CommonOptions& common) {
  const std::filesystem::path dir(artifacts);
  for (const char* f : {"fat.fatbin", "fat-new-arches.fatbin", "kernels.ptx"})
    if (!std::filesystem::exists(dir / f))
      throw gpulab::Unsupported(fmt::format(
          "no {} (nvcc was not found when the lab was built; install the CUDA Toolkit)",
          (dir / f).string()));
  ptx_dissect::ColdStartInputs in;
  in.shipped = read_manifest((dir / "fat.fatbin").string(), in.shipped_bytes);
  in.with_new_arches =
      read_manifest((dir / "fat-new-arches.fatbin").string(), in.with_new_arches_bytes);
  in.kernels = static_cast<int>(
      ptx_dissect::entry_names(read_file((dir / "kernels.ptx").string(), 16u << 20)).size());
  ptx_dissect::ColdStartTable table;
  try {
    table = ptx_dissect::cold_start_table(in);
  } catch (const std::invalid_argument& e) {
    throw gpulab::UsageError(fmt::format("--artifacts {}: {}", artifacts, e.what()));
  }
  if (common.json)
    gpulab::print_json(ptx_dissect::to_json(table));
  else
    fmt::print("{}", ptx_dissect::render(table, in));
  return gpulab::kExitOk;
}

// nvcc's and clang's PTX of kernels/kernels.cu, each with its ptxas -v report when present.
int cmd_clang_diff(const std::string& artifacts, const gpulab::CommonOptions& common) {
  const std::filesystem::path dir(artifacts);
  if (!std::filesystem::exists(dir / "kernels-clang.ptx"))
    throw gpulab::Unsupported(fmt::format(
        "no {} (the build found no nvcc, or no clang with the NVPTX target)",
        (dir / "kernels-clang.ptx").string()));
  const auto load = [&](const char* ptx, const char* ptxas) {
    ptx_dissect::CompilerPtx side{read_file((dir / ptx).string(), 16u << 20), std::nullopt};
    if (std::filesystem::exists(dir / ptxas))
      side.ptxas = ptx_dissect::parse_ptxas_report(read_file((dir / ptxas).string(), 1u << 20));
    return side;
  };
  ptx_dissect::CrossCompilerReport report;
  try {
    report = ptx_dissect::compare_compilers(load("kernels.ptx", "ptxas-v.txt"),
                                            load("kernels-clang.ptx", "ptxas-clang-v.txt"));
  } catch (const std::runtime_error& e) {  // a PTX or ptxas file that is not what the build wrote
    throw gpulab::UsageError(fmt::format("--artifacts {}: {}", artifacts, e.what()));
  }
  if (common.json)
    gpulab::print_json(ptx_dissect::to_json(report));
  else
    fmt::print("{}", ptx_dissect::render(report));
  return gpulab::kExitOk;
}

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
    if (*load) return cmd_load_table(fatbin, common);
    if (*clang_diff) return cmd_clang_diff(artifacts, common);
    if (*cold_start) return cmd_cold_start(artifacts, common);
    if (*pipeline) {
      if (dryrun.empty()) {
        dryrun = (std::filesystem::path(artifacts) / "nvcc-dryrun.txt").string();
        if (!std::filesystem::exists(dryrun))
          throw gpulab::Unsupported(fmt::format(
              "no {} (nvcc was not found when the lab was built; install the CUDA Toolkit)",
              dryrun));
      }
      return cmd_pipeline(dryrun, common);
    }
    if (*annotate) {
      const std::string text = read_file(ptx_file, 16u << 20);
      if (text.find('\0') != std::string::npos)
        throw gpulab::UsageError(fmt::format("'{}' is not a text file", ptx_file));
      fmt::print("{}", ptx_dissect::annotate(text));
      return gpulab::kExitOk;
    }
    return cmd_check(artifacts, cuobjdump, common);
  });
}
