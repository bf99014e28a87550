// ptxc: compiles an elementwise kernel language to PTX and proves the PTX
// right by running it in a PTX interpreter against a reference evaluation.
#include <fmt/format.h>

#include <gpulab/cli.hpp>
#include <gpulab/file.hpp>
#include <gpulab/json.hpp>
#include <gpulab/output_file.hpp>
#include <gpulab/table.hpp>

#include "ptxc/ast.hpp"
#include "ptxc/c_emitter.hpp"
#include "ptxc/compiler.hpp"
#include "ptxc/device_run.hpp"
#include "ptxc/differential.hpp"
#include "ptxc/ptx_module.hpp"
#include "ptxc/suite.hpp"

namespace {

constexpr std::string_view kProgram = "ptxc";
constexpr std::size_t kMaxSourceBytes = 1 << 20;

std::string read_file(const std::string& path) {
  auto text = gpulab::read_text_file(path, kMaxSourceBytes);
  if (!text) throw gpulab::UsageError(text.error().message);
  return std::move(text).value();
}

// Front-end errors: the compiler-style report on stderr, then the one-line summary.
ptxc::Compilation compile_or_report(const std::string& source, const std::string& file,
                                    const ptxc::CompileOptions& o) {
  try {
    return ptxc::compile(source, file, o);
  } catch (const ptxc::CompileError& e) {
    fmt::print(stderr, "{}", e.what());
    throw gpulab::UsageError(
        fmt::format("{} error{} in {}", e.error_count, e.error_count == 1 ? "" : "s", file));
  }
}

ptxc::CompileOptions options_for(int level, const std::string& target, bool no_guard) {
  auto o = ptxc::CompileOptions::at_level(level);
  try {
    (void)ptxc::ptx_version_for(target);
  } catch (const std::invalid_argument& e) {
    throw gpulab::UsageError(e.what());
  }
  o.emit.target = target;
  o.emit.guard = !no_guard;
  return o;
}

const ptxc::ptx::Entry& entry_of(const ptxc::ptx::Module& m, const std::string& name) {
  const auto* e = m.find(name);
  if (e == nullptr)
    throw gpulab::RunError(fmt::format("internal: no entry '{}' in the emitted PTX", name));
  return *e;
}

ptxc::ptx::Module parse_own_ptx(const std::string& text) {
  try {
    return ptxc::ptx::parse_ptx(text);
  } catch (const ptxc::ptx::ParseError& e) {
    throw gpulab::RunError(fmt::format("the interpreter rejected ptxc's own PTX: {}", e.what()));
  }
}

std::string verdict(const ptxc::DiffResult& r) {
  return r.pass ? "PASS" : "FAIL";
}

struct RunFlags {
  int n = 1000;
  int block = 128;
  int level = 1;
  std::string target = "sm_75";
  bool no_guard = false;
};

void check_sizes(const RunFlags& f) {
  if (f.n < 1 || f.n > 10'000'000) throw gpulab::UsageError("--n must be between 1 and 10000000");
  if (f.block < 1 || f.block > 1024)
    throw gpulab::UsageError("--block must be between 1 and 1024 (the CUDA limit)");
}

// ptxc compile FILE
int cmd_compile(const std::string& file, const std::string& out_path, const std::string& emit,
                const RunFlags& f) {
  const std::string source = read_file(file);
  std::string text;
  if (emit == "tokens") {
    try {
      for (const auto& t : ptxc::tokenize(source, file))
        text +=
            fmt::format("{}:{}\t{}\t{}\n", t.loc.line, t.loc.col, ptxc::token_name(t.kind), t.text);
    } catch (const ptxc::CompileError& e) {
      fmt::print(stderr, "{}", e.what());
      throw gpulab::UsageError(
          fmt::format("{} error{} in {}", e.error_count, e.error_count == 1 ? "" : "s", file));
    }
  } else {
    const auto c = compile_or_report(source, file, options_for(f.level, f.target, f.no_guard));
    if (emit == "ast") text = ptxc::dump_ast(c.program);
    if (emit == "ir")
      for (const auto& fn : c.functions)
        text += fmt::format("kernel {}:\n{}", fn.name, ptxc::dump_ir(fn));
    if (emit == "ptx") text = c.ptx;
    if (emit == "c") text = ptxc::emit_c(c.functions);
  }
  if (out_path.empty() || out_path == "-") {
    fmt::print("{}", text);
  } else if (auto written = gpulab::write_file(out_path, text); !written) {
    throw gpulab::UsageError(written.error().message);
  }
  return gpulab::kExitOk;
}

// ptxc run FILE: compile, execute every (or one) kernel, compare with the reference.
int cmd_run(const std::string& file, const std::string& kernel, const std::string& against,
            bool device, const RunFlags& f, const gpulab::CommonOptions& common) {
  check_sizes(f);
  const auto c =
      compile_or_report(read_file(file), file, options_for(f.level, f.target, f.no_guard));
  const auto module = parse_own_ptx(c.ptx);
  std::optional<ptxc::ptx::Module> other;
  if (!against.empty()) {
    try {
      other = ptxc::ptx::parse_ptx(read_file(against));
    } catch (const ptxc::ptx::ParseError& e) {
      throw gpulab::UsageError(fmt::format("{}:{}", against, e.what()));
    }
  }
  bool found = kernel.empty();
  bool all_pass = true;
  gpulab::Table table;
  table.column("kernel", gpulab::Table::Align::kLeft).column(fmt::format("-O{} insts", f.level));
  if (other) table.column("against insts").column("against vs ptxc", gpulab::Table::Align::kLeft);
  if (device) table.column("GPU vs interpreter", gpulab::Table::Align::kLeft);
  table.column("threads")
      .column("executed")
      .column("max |err|")
      .column("result", gpulab::Table::Align::kLeft);
  gpulab::Json results = gpulab::Json::array();
  std::vector<std::string> failures;
  const ptxc::DiffOptions opts{.n = f.n, .block = f.block, .seed = common.seed, .tol = {}};
  for (const auto& k : c.program.kernels) {
    if (!kernel.empty() && k.name != kernel) continue;
    found = true;
    const auto& entry = entry_of(module, k.name);
    const auto r = ptxc::run_differential(k, entry, opts);
    all_pass = all_pass && r.pass;
    if (!r.pass) failures.push_back(fmt::format("FAIL {}: {}", k.name, ptxc::describe_failure(r)));
    std::vector<std::string> row = {k.name, fmt::format("{}", ptxc::ptx::instruction_count(entry))};
    gpulab::Json j = {{"kernel", k.name}, {"instructions", ptxc::ptx::instruction_count(entry)}};
    if (other) {
      const auto* oe = other->find(k.name);
      std::string cmp = "no such entry";
      if (oe != nullptr) {
        // The same inputs through both PTX files; FMA placement may differ, so
        // agreement is counted in ulps, not asserted bitwise.
        const auto inputs = ptxc::random_inputs(k.params, f.n, common.seed);
        try {
          const auto mine = ptxc::run_ptx(entry, k.params, inputs, f.n, f.block);
          const auto theirs = ptxc::run_ptx(*oe, k.params, inputs, f.n, f.block);
          const std::size_t differ = ptxc::count_bit_differences(mine.buffers, theirs.buffers);
          cmp = differ == 0 ? "bit-identical" : fmt::format("{} elements differ", differ);
          j["against_differing_elements"] = differ;
        } catch (const std::exception& e) {
          cmp = "failed";
          failures.push_back(fmt::format("FAIL {} ({}): {}", k.name, against, e.what()));
          all_pass = false;
        }
        j["against_instructions"] = ptxc::ptx::instruction_count(*oe);
        row.push_back(fmt::format("{}", ptxc::ptx::instruction_count(*oe)));
      } else {
        row.emplace_back("-");
      }
      row.push_back(cmp);
    }
    if (device) {
      // The same PTX text through the driver's JIT on a real GPU. The
      // interpreter models .rn rounding exactly, so anything but 0 is a bug.
      const auto inputs = ptxc::random_inputs(k.params, f.n, common.seed);
      const auto gpu = ptxc::run_on_device(c.ptx, k.name, k.params, inputs, f.n, f.block);
      std::string cmp = "interpreter faulted";
      if (r.fault.empty()) {
        const auto interp = ptxc::run_ptx(entry, k.params, inputs, f.n, f.block);
        const std::size_t differ = ptxc::count_bit_differences(interp.buffers, gpu.buffers);
        cmp = differ == 0 ? fmt::format("bit-identical on {}", gpu.device)
                          : fmt::format("{} elements differ", differ);
        if (differ != 0) {
          all_pass = false;
          failures.push_back(
              fmt::format("FAIL {}: {} elements differ between {} and the interpreter", k.name,
                          differ, gpu.device));
        }
        j["gpu_differing_elements"] = differ;
      }
      j["gpu"] = gpu.device;
      row.push_back(cmp);
    }
    row.push_back(r.fault.empty() ? fmt::format("{}", r.stats.threads) : "-");
    row.push_back(r.fault.empty() ? fmt::format("{}", r.stats.instructions) : "-");
    row.push_back(r.fault.empty() ? fmt::format("{:.1e}", r.comparison.max_abs_error) : "-");
    row.push_back(verdict(r));
    table.row(row);
    j["threads"] = r.stats.threads;
    j["executed"] = r.stats.instructions;
    j["max_abs_error"] = r.comparison.max_abs_error;
    j["pass"] = r.pass;
    if (!r.pass) j["failure"] = ptxc::describe_failure(r);
    results.push_back(j);
  }
  if (!found) throw gpulab::UsageError(fmt::format("no kernel named '{}' in {}", kernel, file));
  if (common.json) {
    gpulab::print_json({{"file", file},
                        {"n", f.n},
                        {"block", f.block},
                        {"seed", common.seed},
                        {"opt_level", f.level},
                        {"kernels", results},
                        {"pass", all_pass}});
  } else {
    fmt::print("{}", table.render());
    for (const auto& line : failures) fmt::print("{}\n", line);
  }
  return all_pass ? gpulab::kExitOk : gpulab::kExitCheckFailed;
}

// ptxc: the built-in suite at -O0 and -O1.
int cmd_suite(bool dump, const RunFlags& f, const gpulab::CommonOptions& common) {
  check_sizes(f);
  const auto emit = options_for(1, f.target, f.no_guard).emit;
  const auto suite =
      ptxc::run_suite({.n = f.n, .block = f.block, .seed = common.seed, .tol = {}}, emit);
  if (dump && !common.json) fmt::print("{}\n", suite.ptx_o1);
  gpulab::Table table;
  table.column("kernel", gpulab::Table::Align::kLeft)
      .column("-O0 insts")
      .column("-O1 insts")
      .column("saved")
      .column("max |err| -O1")
      .column("-O0", gpulab::Table::Align::kLeft)
      .column("-O1", gpulab::Table::Align::kLeft);
  gpulab::Json results = gpulab::Json::array();
  std::vector<std::string> failures;
  std::size_t passed = 0;
  for (const auto& row : suite.rows) {
    if (!row.o0.pass)
      failures.push_back(
          fmt::format("FAIL {} -O0: {}", row.kernel, ptxc::describe_failure(row.o0)));
    if (!row.o1.pass)
      failures.push_back(
          fmt::format("FAIL {} -O1: {}", row.kernel, ptxc::describe_failure(row.o1)));
    passed += row.pass() ? 1 : 0;
    table.row({row.kernel, fmt::format("{}", row.instructions_o0),
               fmt::format("{}", row.instructions_o1),
               fmt::format("{}", static_cast<long long>(row.instructions_o0) -
                                     static_cast<long long>(row.instructions_o1)),
               row.o1.fault.empty() ? fmt::format("{:.1e}", row.o1.comparison.max_abs_error) : "-",
               verdict(row.o0), verdict(row.o1)});
    results.push_back({{"kernel", row.kernel},
                       {"instructions_O0", row.instructions_o0},
                       {"instructions_O1", row.instructions_o1},
                       {"max_abs_error_O1", row.o1.comparison.max_abs_error},
                       {"pass_O0", row.o0.pass},
                       {"pass_O1", row.o1.pass}});
  }
  const bool ok = passed == suite.rows.size();
  if (common.json) {
    gpulab::print_json({{"n", f.n},
                        {"block", f.block},
                        {"seed", common.seed},
                        {"kernels", results},
                        {"pass", ok}});
  } else {
    fmt::print("{}", table.render());
    fmt::print(
        "{}/{} kernels agree with the reference at -O0 and -O1 (n={}, block={}, seed={}): {}\n",
        passed, suite.rows.size(), f.n, f.block, common.seed, ok ? "PASS" : "FAIL");
    for (const auto& line : failures) fmt::print("{}\n", line);
  }
  return ok ? gpulab::kExitOk : gpulab::kExitCheckFailed;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "ptxc: compiles elementwise kernels (kernel k(a: f32, x: f32*) { x[i] = a * x[i]; }) to PTX "
      "and checks\n"
      "the PTX in a PTX interpreter against a reference. With no subcommand: runs the built-in "
      "suite."};
  app.require_subcommand(0, 1);
  gpulab::CommonOptions common;
  gpulab::add_json_flag(app, common);
  gpulab::add_seed_flag(app, common);
  RunFlags flags;
  bool dump = false;
  app.add_flag("--dump", dump, "Suite: also print every kernel's -O1 PTX");
  app.add_option("--n", flags.n, "Suite: elements per buffer (not a block multiple on purpose)")
      ->capture_default_str();
  app.add_option("--block", flags.block, "Suite: threads per block")->capture_default_str();

  std::string file;
  std::string out_path;
  std::string emit = "ptx";
  auto* compile =
      app.add_subcommand("compile", "Compile FILE and print (or write) one stage's output");
  compile->add_option("FILE", file, "Kernel source")->required();
  compile->add_option("-o", out_path, "Output file (default: stdout)");
  compile->add_option("--emit", emit, "What to print")
      ->check(CLI::IsMember({"tokens", "ast", "ir", "ptx", "c"}))
      ->capture_default_str();

  std::string kernel;
  std::string against;
  auto* run = app.add_subcommand(
      "run", "Compile FILE, run every kernel in the interpreter, compare with the reference");
  run->add_option("FILE", file, "Kernel source")->required();
  run->add_option("--kernel", kernel, "Only this kernel");
  run->add_option(
      "--against", against,
      "Also run the same-named entries of this PTX file (e.g. nvcc's) on the same inputs");
  bool device = false;
  run->add_flag("--device", device,
                "Also run each kernel on the GPU (driver API JIT of the PTX) and compare bitwise");
  run->add_option("--n", flags.n, "Elements per buffer")->capture_default_str();
  run->add_option("--block", flags.block, "Threads per block")->capture_default_str();
  gpulab::add_seed_flag(*run, common);
  gpulab::add_json_flag(*run, common);

  for (auto* sub : {compile, run}) {
    sub->add_option("-O", flags.level, "Optimisation level: 0 = no passes, 1 = fold, CSE, FMA, DCE")
        ->check(CLI::IsMember({0, 1}))
        ->capture_default_str();
    sub->add_option("--target", flags.target, "PTX .target (sets .version)")->capture_default_str();
    sub->add_flag("--no-guard", flags.no_guard,
                  "Omit the tail guard (the pitfall: out-of-bounds threads)");
  }

  return gpulab::run_program(kProgram, app, argc, argv, [&]() -> int {
    if (*compile) return cmd_compile(file, out_path, emit, flags);
    if (*run) return cmd_run(file, kernel, against, device, flags, common);
    return cmd_suite(dump, flags, common);
  });
}
