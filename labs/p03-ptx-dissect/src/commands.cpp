// Each subcommand of ptx-dissect: reads the build's artifacts (or the file the
// user named), runs the lab's logic and prints its table or JSON. main.cpp only
// parses flags and picks one.
#include "ptx_dissect/commands.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <gpulab/errors.hpp>
#include <gpulab/file.hpp>
#include <gpulab/json.hpp>
#include <gpulab/table.hpp>
#include <span>

#include "ptx_dissect/annotate.hpp"
#include "ptx_dissect/cold_start.hpp"
#include "ptx_dissect/cross_compiler.hpp"
#include "ptx_dissect/fatbin.hpp"
#include "ptx_dissect/findings.hpp"
#include "ptx_dissect/load_decision.hpp"
#include "ptx_dissect/nvcc_plan.hpp"
#include "ptx_dissect/ptx_text.hpp"

namespace ptx_dissect {

namespace {

std::string read_file(const std::string& path, std::size_t limit) {
  auto text = gpulab::read_text_file(path, limit);
  if (!text) throw gpulab::UsageError(text.error().message);
  return std::move(text).value();
}

FatbinManifest read_manifest(const std::string& path, std::uint64_t& bytes_out) {
  const std::string bytes = read_file(path, 256u << 20);
  std::vector<FatbinEntry> entries;
  try {
    entries = parse_fatbin(
        std::span(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()));
  } catch (const std::runtime_error& e) {
    throw gpulab::UsageError(fmt::format("{}: {}", path, e.what()));
  }
  FatbinManifest manifest;
  for (const auto& e : entries)
    (e.kind == FatbinEntry::Kind::kElf ? manifest.sass : manifest.ptx)
        .push_back(e.arch);
  bytes_out = bytes.size();
  return manifest;
}

}  // namespace

int run_check(const std::string& artifacts, const std::string& cuobjdump,
              bool json) {
  const auto findings = run_all_checks(artifacts, cuobjdump);
  int fails = 0;
  int skips = 0;
  gpulab::Table table;
  table.column("kernel", gpulab::Table::Align::kLeft)
      .column("what to find", gpulab::Table::Align::kLeft)
      .column("found", gpulab::Table::Align::kLeft)
      .column("result", gpulab::Table::Align::kLeft);
  gpulab::Json rows = gpulab::Json::array();
  for (const auto& f : findings) {
    fails += f.status == Finding::Status::kFail;
    skips += f.status == Finding::Status::kSkip;
    table.row({f.kernel, f.check, f.found, std::string(status_name(f.status))});
    rows.push_back({{"kernel", f.kernel},
                    {"check", f.check},
                    {"found", f.found},
                    {"result", status_name(f.status)}});
  }
  const auto passed = static_cast<int>(findings.size()) - fails - skips;
  if (json) {
    gpulab::print_json(
        {{"findings", rows}, {"passed", passed}, {"failed", fails}, {"skipped", skips}});
  } else {
    fmt::print("{}", table.render());
    fmt::print("{} checks: {} PASS, {} FAIL, {} SKIP\n", findings.size(), passed, fails, skips);
  }
  return fails == 0 ? gpulab::kExitOk : gpulab::kExitCheckFailed;
}

int run_load_table(const std::string& fatbin_path, bool json) {
  FatbinManifest manifest = curriculum_matrix();
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
  for (const auto& gpu : reference_gpus()) {
    const auto d = decide_load(manifest, gpu.arch);
    std::string action;
    switch (d.action) {
      case LoadDecision::Action::kRunSass:
        action = fmt::format("run sm_{} SASS", d.image_arch);
        break;
      case LoadDecision::Action::kJitPtx:
        action = fmt::format("JIT compute_{} PTX", d.image_arch);
        break;
      case LoadDecision::Action::kFail:
        action = "load fails";
        break;
    }
    table.row({gpu.name, fmt::format("sm_{}", gpu.arch), action, d.explanation});
    rows.push_back(
        {{"gpu", gpu.name}, {"arch", gpu.arch}, {"action", action}, {"why", d.explanation}});
  }
  if (json) {
    gpulab::print_json({{"fatbin", source}, {"contents", contents}, {"decisions", rows}});
  } else {
    fmt::print("fatbin ({}): {}\n\n{}", source, contents, table.render());
  }
  return gpulab::kExitOk;
}

int run_pipeline(const std::string& path, bool json) {
  const std::string text = read_file(path, 1u << 20);
  std::vector<PlanStep> steps;
  try {
    steps = parse_nvcc_dryrun(text);
  } catch (const std::runtime_error& e) {
    throw gpulab::UsageError(fmt::format("{}: {}", path, e.what()));
  }
  const auto join = [](const std::vector<std::string>& v) {
    std::string out;
    for (const auto& x : v) out += (out.empty() ? "" : ", ") + x;
    return out;
  };
  std::string command = recorded_command(text);
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
  if (json) {
    gpulab::print_json({{"command", command}, {"steps", rows}});
  } else {
    fmt::print("{}: {} steps\n\n{}", command, steps.size(), table.render());
  }
  return gpulab::kExitOk;
}

// The cold-start incident's three fixes, on the build's real fatbins (today's and fix 1's).
int run_cold_start(const std::string& artifacts, bool json) {
  const std::filesystem::path dir(artifacts);
  for (const char* f : {"fat.fatbin", "fat-new-arches.fatbin", "kernels.ptx"})
    if (!std::filesystem::exists(dir / f))
      throw gpulab::Unsupported(fmt::format(
          "no {} (nvcc was not found when the lab was built; install the CUDA Toolkit)",
          (dir / f).string()));
  ColdStartInputs in;
  in.shipped = read_manifest((dir / "fat.fatbin").string(), in.shipped_bytes);
  in.with_new_arches =
      read_manifest((dir / "fat-new-arches.fatbin").string(), in.with_new_arches_bytes);
  in.kernels = static_cast<int>(
      entry_names(read_file((dir / "kernels.ptx").string(), 16u << 20)).size());
  ColdStartTable table;
  try {
    table = cold_start_table(in);
  } catch (const std::invalid_argument& e) {
    throw gpulab::UsageError(fmt::format("--artifacts {}: {}", artifacts, e.what()));
  }
  if (json)
    gpulab::print_json(to_json(table));
  else
    fmt::print("{}", render(table, in));
  return gpulab::kExitOk;
}

// nvcc's and clang's PTX of kernels/kernels.cu, each with its ptxas -v report when present.
int run_clang_diff(const std::string& artifacts, bool json) {
  const std::filesystem::path dir(artifacts);
  if (!std::filesystem::exists(dir / "kernels-clang.ptx"))
    throw gpulab::Unsupported(fmt::format(
        "no {} (the build found no nvcc, or no clang with the NVPTX target)",
        (dir / "kernels-clang.ptx").string()));
  const auto load = [&](const char* ptx, const char* ptxas) {
    CompilerPtx side{read_file((dir / ptx).string(), 16u << 20), std::nullopt};
    if (std::filesystem::exists(dir / ptxas))
      side.ptxas = parse_ptxas_report(read_file((dir / ptxas).string(), 1u << 20));
    return side;
  };
  CrossCompilerReport report;
  try {
    report = compare_compilers(load("kernels.ptx", "ptxas-v.txt"),
                                            load("kernels-clang.ptx", "ptxas-clang-v.txt"));
  } catch (const std::runtime_error& e) {  // a PTX or ptxas file that is not what the build wrote
    throw gpulab::UsageError(fmt::format("--artifacts {}: {}", artifacts, e.what()));
  }
  if (json)
    gpulab::print_json(to_json(report));
  else
    fmt::print("{}", render(report));
  return gpulab::kExitOk;
}

int run_annotate(const std::string& path) {
  const std::string text = read_file(path, 16u << 20);
  if (text.find('\0') != std::string::npos)
    throw gpulab::UsageError(fmt::format("'{}' is not a text file", path));
  fmt::print("{}", annotate(text));
  return gpulab::kExitOk;
}

}  // namespace ptx_dissect
