#include "ptxc/reports.hpp"

#include <fmt/format.h>

#include <gpulab/errors.hpp>
#include <gpulab/table.hpp>
#include <stdexcept>

#include "ptxc/ast.hpp"
#include "ptxc/c_emitter.hpp"
#include "ptxc/device_run.hpp"
#include "ptxc/lexer.hpp"

namespace ptxc {

namespace {

const char* verdict(const DiffResult& r) {
  return r.pass ? "PASS" : "FAIL";
}

const ptx::Entry& entry_of(const ptx::Module& m, const std::string& name) {
  const auto* e = m.find(name);
  if (e == nullptr)
    throw gpulab::RunError(fmt::format("internal: no entry '{}' in the emitted PTX", name));
  return *e;
}

ptx::Module parse_own_ptx(const std::string& text) {
  try {
    return ptx::parse_ptx(text);
  } catch (const ptx::ParseError& e) {
    throw gpulab::RunError(fmt::format("the interpreter rejected ptxc's own PTX: {}", e.what()));
  }
}

}  // namespace

void check_sizes(const RunFlags& f) {
  if (f.n < 1 || f.n > 10'000'000) throw gpulab::UsageError("--n must be between 1 and 10000000");
  if (f.block < 1 || f.block > 1024)
    throw gpulab::UsageError("--block must be between 1 and 1024 (the CUDA limit)");
}

CompileOptions options_for(int level, const RunFlags& f) {
  auto o = CompileOptions::at_level(level);
  try {
    (void)ptx_version_for(f.target);
  } catch (const std::invalid_argument& e) {
    throw gpulab::UsageError(e.what());
  }
  o.emit.target = f.target;
  o.emit.guard = !f.no_guard;
  return o;
}

std::string emit_stage(const std::string& source, const std::string& file, const std::string& stage,
                       const RunFlags& f) {
  std::string text;
  if (stage == "tokens") {
    for (const auto& t : tokenize(source, file))
      text += fmt::format("{}:{}\t{}\t{}\n", t.loc.line, t.loc.col, token_name(t.kind), t.text);
    return text;
  }
  const auto c = compile(source, file, options_for(f.level, f));
  if (stage == "ast") text = dump_ast(c.program);
  if (stage == "ir")
    for (const auto& fn : c.functions) text += fmt::format("kernel {}:\n{}", fn.name, dump_ir(fn));
  if (stage == "ptx") text = c.ptx;
  if (stage == "c") text = emit_c(c.functions);
  return text;
}

// ---- run ----

RunReport run_kernels(const Compilation& c, const RunRequest& q) {
  const RunFlags& f = q.flags;
  const auto module = parse_own_ptx(c.ptx);
  RunReport report;
  report.request = q;
  bool found = q.kernel.empty();
  const DiffOptions opts{.n = f.n, .block = f.block, .seed = q.seed, .tol = {}};
  for (const auto& k : c.program.kernels) {
    if (!q.kernel.empty() && k.name != q.kernel) continue;
    found = true;
    const auto& entry = entry_of(module, k.name);
    KernelRun run;
    run.name = k.name;
    run.instructions = ptx::instruction_count(entry);
    run.diff = run_differential(k, entry, opts);
    if (!run.diff.pass)
      report.failures.push_back(fmt::format("FAIL {}: {}", k.name, describe_failure(run.diff)));
    if (q.against != nullptr) {
      const auto* oe = q.against->find(k.name);
      run.against = "no such entry";
      if (oe != nullptr) {
        // The same inputs through both PTX files; FMA placement may differ, so
        // agreement is counted in ulps, not asserted bitwise.
        const auto inputs = random_inputs(k.params, f.n, q.seed);
        try {
          const auto mine = run_ptx(entry, k.params, inputs, f.n, f.block);
          const auto theirs = run_ptx(*oe, k.params, inputs, f.n, f.block);
          const std::size_t differ = count_bit_differences(mine.buffers, theirs.buffers);
          run.against = differ == 0 ? "bit-identical" : fmt::format("{} elements differ", differ);
          run.against_differing = differ;
        } catch (const std::exception& e) {
          run.against = "failed";
          report.failures.push_back(
              fmt::format("FAIL {} ({}): {}", k.name, q.against_path, e.what()));
        }
        run.against_instructions = ptx::instruction_count(*oe);
      }
    }
    if (q.device) {
      // The same PTX text through the driver's JIT on a real GPU. The
      // interpreter models .rn rounding exactly, so anything but 0 is a bug.
      const auto inputs = random_inputs(k.params, f.n, q.seed);
      const auto gpu = run_on_device(c.ptx, k.name, k.params, inputs, f.n, f.block);
      run.gpu = gpu.device;
      run.gpu_comparison = "interpreter faulted";
      if (run.diff.fault.empty()) {
        const auto interp = run_ptx(entry, k.params, inputs, f.n, f.block);
        const std::size_t differ = count_bit_differences(interp.buffers, gpu.buffers);
        run.gpu_comparison = differ == 0 ? fmt::format("bit-identical on {}", gpu.device)
                                         : fmt::format("{} elements differ", differ);
        if (differ != 0)
          report.failures.push_back(
              fmt::format("FAIL {}: {} elements differ between {} and the interpreter", k.name,
                          differ, gpu.device));
        run.gpu_differing = differ;
      }
    }
    report.kernels.push_back(std::move(run));
  }
  if (!found) throw gpulab::UsageError(fmt::format("no kernel named '{}' in {}", q.kernel, q.file));
  return report;
}

std::string render(const RunReport& r) {
  const RunRequest& q = r.request;
  gpulab::Table table;
  table.column("kernel", gpulab::Table::Align::kLeft)
      .column(fmt::format("-O{} insts", q.flags.level));
  if (q.against != nullptr)
    table.column("against insts").column("against vs ptxc", gpulab::Table::Align::kLeft);
  if (q.device) table.column("GPU vs interpreter", gpulab::Table::Align::kLeft);
  table.column("threads")
      .column("executed")
      .column("max |err|")
      .column("result", gpulab::Table::Align::kLeft);
  for (const auto& k : r.kernels) {
    std::vector<std::string> row = {k.name, fmt::format("{}", k.instructions)};
    if (q.against != nullptr) {
      row.push_back(k.against_instructions ? fmt::format("{}", *k.against_instructions) : "-");
      row.push_back(k.against);
    }
    if (q.device) row.push_back(k.gpu_comparison);
    const bool ran = k.diff.fault.empty();
    row.push_back(ran ? fmt::format("{}", k.diff.stats.threads) : "-");
    row.push_back(ran ? fmt::format("{}", k.diff.stats.instructions) : "-");
    row.push_back(ran ? fmt::format("{:.1e}", k.diff.comparison.max_abs_error) : "-");
    row.emplace_back(verdict(k.diff));
    table.row(row);
  }
  std::string out = table.render();
  for (const auto& line : r.failures) out += line + "\n";
  return out;
}

gpulab::Json to_json(const RunReport& r) {
  const RunRequest& q = r.request;
  gpulab::Json results = gpulab::Json::array();
  for (const auto& k : r.kernels) {
    gpulab::Json j = {{"kernel", k.name}, {"instructions", k.instructions}};
    if (k.against_differing) j["against_differing_elements"] = *k.against_differing;
    if (k.against_instructions) j["against_instructions"] = *k.against_instructions;
    if (k.gpu_differing) j["gpu_differing_elements"] = *k.gpu_differing;
    if (q.device) j["gpu"] = k.gpu;
    j["threads"] = k.diff.stats.threads;
    j["executed"] = k.diff.stats.instructions;
    j["max_abs_error"] = k.diff.comparison.max_abs_error;
    j["pass"] = k.diff.pass;
    if (!k.diff.pass) j["failure"] = describe_failure(k.diff);
    results.push_back(j);
  }
  return {{"file", q.file},
          {"n", q.flags.n},
          {"block", q.flags.block},
          {"seed", q.seed},
          {"opt_level", q.flags.level},
          {"kernels", results},
          {"pass", r.pass()}};
}

// ---- suite ----

SuiteReport run_suite_report(const RunFlags& f, std::uint64_t seed, bool dump) {
  check_sizes(f);
  const auto emit = options_for(1, f).emit;
  SuiteReport r;
  r.run = run_suite({.n = f.n, .block = f.block, .seed = seed, .tol = {}}, emit);
  r.flags = f;
  r.seed = seed;
  r.dump = dump;
  return r;
}

std::size_t SuiteReport::passed() const {
  std::size_t n = 0;
  for (const auto& row : run.rows) n += row.pass() ? 1 : 0;
  return n;
}

std::string render(const SuiteReport& r) {
  std::string out = r.dump ? r.run.ptx_o1 + "\n" : "";
  gpulab::Table table;
  table.column("kernel", gpulab::Table::Align::kLeft)
      .column("-O0 insts")
      .column("-O1 insts")
      .column("saved")
      .column("max |err| -O1")
      .column("-O0", gpulab::Table::Align::kLeft)
      .column("-O1", gpulab::Table::Align::kLeft);
  std::vector<std::string> failures;
  for (const auto& row : r.run.rows) {
    if (!row.o0.pass)
      failures.push_back(fmt::format("FAIL {} -O0: {}", row.kernel, describe_failure(row.o0)));
    if (!row.o1.pass)
      failures.push_back(fmt::format("FAIL {} -O1: {}", row.kernel, describe_failure(row.o1)));
    table.row({row.kernel, fmt::format("{}", row.instructions_o0),
               fmt::format("{}", row.instructions_o1),
               fmt::format("{}", static_cast<long long>(row.instructions_o0) -
                                     static_cast<long long>(row.instructions_o1)),
               row.o1.fault.empty() ? fmt::format("{:.1e}", row.o1.comparison.max_abs_error) : "-",
               verdict(row.o0), verdict(row.o1)});
  }
  out += table.render();
  out += fmt::format(
      "{}/{} kernels agree with the reference at -O0 and -O1 (n={}, block={}, seed={}): {}\n",
      r.passed(), r.run.rows.size(), r.flags.n, r.flags.block, r.seed, r.pass() ? "PASS" : "FAIL");
  for (const auto& line : failures) out += line + "\n";
  return out;
}

gpulab::Json to_json(const SuiteReport& r) {
  gpulab::Json results = gpulab::Json::array();
  for (const auto& row : r.run.rows)
    results.push_back({{"kernel", row.kernel},
                       {"instructions_O0", row.instructions_o0},
                       {"instructions_O1", row.instructions_o1},
                       {"max_abs_error_O1", row.o1.comparison.max_abs_error},
                       {"pass_O0", row.o0.pass},
                       {"pass_O1", row.o1.pass}});
  return {{"n", r.flags.n},
          {"block", r.flags.block},
          {"seed", r.seed},
          {"kernels", results},
          {"pass", r.pass()}};
}

}  // namespace ptxc
