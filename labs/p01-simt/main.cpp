// simt-sim: a 32-lane SIMT warp simulator. With no arguments it prints the
// curriculum's divergence table, the checks and the extensions; `run FILE`
// assembles and runs any .simt program.
#include <fmt/core.h>

#include <cstdio>

#include "gpulab/cli.hpp"
#include "gpulab/flag_checks.hpp"
#include "gpulab/json.hpp"
#include "simt/assembler.hpp"
#include "simt/divergence_report.hpp"
#include "simt/latency_hiding.hpp"
#include "simt/machine.hpp"
#include "simt/report_output.hpp"

namespace {

constexpr std::string_view kProgram = "simt-sim";

// Flags that change how the machine behaves; both the report and `run` take them.
void add_machine_flags(CLI::App& app, simt::Config& config) {
  // A string option: CLI11's enum mapping would print "{greedy->0,...}" in --help.
  app.add_option_function<std::string>(
         "--policy",
         [&config](const std::string& name) {
           config.policy = name == "greedy" ? simt::SchedulingPolicy::kGreedy : simt::SchedulingPolicy::kRoundRobin;
         },
         "Warp scheduler: greedy (greedy-then-oldest: stay on a warp until it stalls) or round-robin")
      ->check(CLI::IsMember({"greedy", "round-robin"}))
      ->default_str("greedy");
  app.add_option("--load-latency", config.load_latency, "Cycles a warp waits after LD")
      ->capture_default_str()
      ->check(CLI::Range(0, 100000));
  app.add_option("--max-issues", config.max_issues, "Stop a run after this many issues (runaway loops)")
      ->capture_default_str()
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1} << 40));
  app.add_flag("--reconverge-at-target", config.pitfalls.reconverge_at_target,
               "Pitfall: reconverge at the branch target instead of the post-dominator");
  app.add_flag("--unmasked-writes", config.pitfalls.unmasked_writes,
               "Pitfall: let inactive lanes commit their writes");
  app.add_flag("--jmp-reconverges", config.pitfalls.jmp_reconverges,
               "Pitfall: treat a JMP inside a divergent region as the reconvergence point");
}

int report(const simt::Config& config, bool json) {
  const auto divergence = simt::run_divergence_report(config);
  const auto latency = simt::run_latency_hiding(config);
  if (json)
    gpulab::print_json(simt::report_json(divergence, latency));
  else
    fmt::print("{}", simt::render_report(divergence, latency));
  return divergence.all_passed() ? gpulab::kExitOk : gpulab::kExitCheckFailed;
}

int run_file(const std::string& path, simt::Config config, bool json, bool trace, std::size_t show_words) {
  const simt::Program program = simt::assemble_file(path);
  if (trace && !json) {
    config.on_issue = [](const simt::IssueEvent& e) {
      fmt::print("cycle {:>6}  warp {:>2}  pc {:>4}  mask {:08x}  {}\n", e.cycle, e.warp, e.pc, e.mask, e.instruction->text);
    };
  }
  const simt::RunResult r = simt::run(program, config);
  const auto& s = r.stats;
  if (json) {
    gpulab::Json doc;
    doc["program"] = path;
    doc["warps"] = config.warps;
    doc["issues"] = s.issues;
    doc["lane_cycles"] = s.lane_cycles;
    doc["util_pct"] = s.util_pct();
    doc["cycles"] = s.cycles;
    doc["issue_util_pct"] = s.issue_util_pct();
    doc["max_stack_depth"] = s.max_stack_depth;
    doc["stack_empty_at_exit"] = s.stack_empty_at_exit;
    doc["mem"] = r.mem;
    gpulab::print_json(doc);
  } else {
    fmt::print("program     {} ({} instructions, {} warp{})\n", path, program.code.size(), config.warps,
               config.warps == 1 ? "" : "s");
    fmt::print("issues      {}\n", s.issues);
    fmt::print("util%       {:.1f}  ({} lane-cycles / ({} issues x 32))\n", s.util_pct(), s.lane_cycles, s.issues);
    fmt::print("cycles      {}  (issue slot busy {:.1f}%)\n", s.cycles, s.issue_util_pct());
    fmt::print("max depth   {}\n", s.max_stack_depth);
    const std::size_t n = std::min(show_words, r.mem.size());
    std::string words;
    for (std::size_t i = 0; i < n; ++i) words += fmt::format("{}{}", i ? " " : "", r.mem[i]);
    fmt::print("mem[0..{}]  {}\n", n ? n - 1 : 0, words);
  }
  if (!s.stack_empty_at_exit) {
    fmt::print(stderr, "FAIL: the program ended inside a divergent region (mask stack not empty)\n");
    return gpulab::kExitCheckFailed;
  }
  return gpulab::kExitOk;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "simt-sim: a 32-lane SIMT warp with a reconvergence mask stack. With no arguments, prints the\n"
      "divergence table (issues, util%, slowdown), the per-lane checks and the extensions."};
  app.fallthrough();
  simt::Config config;
  bool json = false;
  add_machine_flags(app, config);
  app.add_flag("--json", json, "Print the results as one JSON document");

  auto* run_cmd = app.add_subcommand("run", "Assemble and run a .simt program");
  std::string file;
  bool trace = false;
  std::size_t show_words = 32;
  run_cmd->add_option("FILE", file, "Program to run (see kernels/*.simt)")->required();
  run_cmd->add_option("--warps", config.warps, "Resident warps (TID = warp*32 + lane)")->capture_default_str();
  run_cmd->add_option("--mem-words", config.mem_words, "Words of shared memory")
      ->capture_default_str()
      ->check(gpulab::whole_in<std::size_t>(1, std::size_t{1} << 28));
  run_cmd->add_option("--show-words", show_words, "Memory words printed in the human output")
      ->capture_default_str()
      ->check(gpulab::whole_in<std::size_t>());
  run_cmd->add_flag("--trace", trace, "Print every issue: cycle, warp, PC, active mask, instruction");

  return gpulab::run_program(kProgram, app, argc, argv, [&] {
    try {
      if (run_cmd->parsed()) return run_file(file, config, json, trace, show_words);
      return report(config, json);
    } catch (const simt::AssemblyError& e) {
      fmt::print(stderr, "{}\n", e.what());  // compiler-style FILE:LINE: error: ...
      return gpulab::kExitUsage;
    }
  });
}
