// ptxc: compiles an elementwise kernel language to PTX and proves the PTX
// right by running it in a PTX interpreter against a reference evaluation.
// What each command computes and prints is in ptxc/reports.hpp.
#include <fmt/format.h>

#include <gpulab/cli.hpp>
#include "gpulab/emit_report.hpp"
#include <gpulab/file.hpp>
#include <gpulab/json.hpp>
#include <gpulab/output_file.hpp>

#include "ptxc/diagnostics.hpp"
#include "ptxc/reports.hpp"

namespace {

constexpr std::string_view kProgram = "ptxc";
constexpr std::size_t kMaxSourceBytes = 1 << 20;

std::string read_file(const std::string& path) {
  auto text = gpulab::read_text_file(path, kMaxSourceBytes);
  if (!text) throw gpulab::UsageError(text.error().message);
  return std::move(text).value();
}

// Front-end errors: the compiler-style report on stderr, then the one-line summary.
template <class F>
auto or_report(const std::string& file, F&& front_end) {
  try {
    return front_end();
  } catch (const ptxc::CompileError& e) {
    fmt::print(stderr, "{}", e.what());
    throw gpulab::UsageError(
        fmt::format("{} error{} in {}", e.error_count, e.error_count == 1 ? "" : "s", file));
  }
}


// ptxc compile FILE
int cmd_compile(const std::string& file, const std::string& out_path, const std::string& stage,
                const ptxc::RunFlags& f) {
  const std::string source = read_file(file);
  const std::string text =
      or_report(file, [&] { return ptxc::emit_stage(source, file, stage, f); });
  if (out_path.empty() || out_path == "-") {
    fmt::print("{}", text);
  } else if (auto written = gpulab::write_file(out_path, text); !written) {
    throw gpulab::UsageError(written.error().message);
  }
  return gpulab::kExitOk;
}

// ptxc run FILE: compile, execute every (or one) kernel, compare with the reference.
int cmd_run(ptxc::RunRequest q, const gpulab::CommonOptions& common) {
  ptxc::check_sizes(q.flags);
  const std::string source = read_file(q.file);
  const auto c = or_report(q.file, [&] {
    return ptxc::compile(source, q.file, ptxc::options_for(q.flags.level, q.flags));
  });
  std::optional<ptxc::ptx::Module> other;
  if (!q.against_path.empty()) {
    try {
      other = ptxc::ptx::parse_ptx(read_file(q.against_path));
    } catch (const ptxc::ptx::ParseError& e) {
      throw gpulab::UsageError(fmt::format("{}:{}", q.against_path, e.what()));
    }
    q.against = &*other;
  }
  q.seed = common.seed;
  return gpulab::emit_report(ptxc::run_kernels(c, q), common.json);
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
  ptxc::RunFlags flags;
  bool dump = false;
  app.add_flag("--dump", dump, "Suite: also print every kernel's -O1 PTX");
  app.add_option("--n", flags.n, "Suite: elements per buffer (not a block multiple on purpose)")
      ->capture_default_str();
  app.add_option("--block", flags.block, "Suite: threads per block")->capture_default_str();

  std::string file;
  std::string out_path;
  std::string stage = "ptx";
  auto* compile =
      app.add_subcommand("compile", "Compile FILE and print (or write) one stage's output");
  compile->add_option("FILE", file, "Kernel source")->required();
  compile->add_option("-o", out_path, "Output file (default: stdout)");
  compile->add_option("--emit", stage, "What to print")
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
    if (*compile) return cmd_compile(file, out_path, stage, flags);
    if (*run) return cmd_run({file, kernel, against, nullptr, device, flags, common.seed}, common);
    return gpulab::emit_report(ptxc::run_suite_report(flags, common.seed, dump), common.json);
  });
}
