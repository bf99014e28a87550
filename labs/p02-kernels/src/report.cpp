#include "kernels/report.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <fstream>
#include <gpulab/cuda/device_report.hpp>
#include <gpulab/number_format.hpp>
#include <gpulab/stats.hpp>
#include <gpulab/table.hpp>
#include <sstream>

#include "kernels/reference.hpp"
#include "kernels/tolerance.hpp"

#ifndef KERNELS_PTXAS_REPORT
#define KERNELS_PTXAS_REPORT ""
#endif

namespace kernels {
namespace {

using gpulab::Table;
constexpr auto L = Table::Align::kLeft;

Row timed_row(std::string kernel, const TimedRun& run) {
  Row row;
  row.kernel = std::move(kernel);
  row.event_median_ms = gpulab::median(run.event_ms);
  row.event_min_ms = *std::min_element(run.event_ms.begin(), run.event_ms.end());
  row.chrono_enqueue_ms = run.chrono_enqueue_ms;
  return row;
}

const Row* find(const std::vector<Row>& rows, std::string_view kernel) {
  for (const auto& r : rows)
    if (r.kernel == kernel) return &r;
  return nullptr;
}

std::string ms(double v) {
  return fmt::format("{:.3f}", v);
}

}  // namespace

std::vector<std::string> kernel_names() {
  std::vector<std::string> names{"vec_add"};
  for (const auto& s : matmul_shapes()) names.emplace_back(s.name);
  return names;
}

bool selected(const MeasureOptions& o, std::string_view name) {
  return o.kernels.empty() ||
         std::find(o.kernels.begin(), o.kernels.end(), name) != o.kernels.end();
}

bool MeasureReport::all_checks_pass() const {
  auto ok = [](const Row& r) { return r.ok; };
  return std::all_of(memory_rows.begin(), memory_rows.end(), ok) &&
         std::all_of(matmul_rows.begin(), matmul_rows.end(), ok);
}

bool MeasureReport::all_gates_pass() const {
  return std::all_of(gates.begin(), gates.end(),
                     [](const Gate& g) { return !g.evaluated || g.pass; });
}

MeasureReport measure(const MeasureOptions& o) {
  MeasureReport rep;
  rep.options = o;
  rep.device = open_device();

  if (selected(o, "vec_add")) {
    const TimedRun copy = run_copy(o.copy_bytes, o.plan);
    Row c = timed_row("copy", copy);
    c.check = "n/a";
    c.gbs = 2.0 * static_cast<double>(o.copy_bytes) / (c.event_median_ms * 1e-3) / 1e9;
    rep.memory_rows.push_back(c);

    // Slack after n covers the whole last block plus a margin; it holds the canary.
    const std::uint64_t n = o.vec_n;
    const std::size_t len = o.exact_alloc ? n : total_threads(launch_1d(n, 256)) + 64;
    const std::vector<float> a = random_values(len, o.seed);
    const std::vector<float> b = random_values(len, o.seed + 1);
    constexpr float kCanary = -1.0f;  // inputs are >= 0, so no sum can equal it
    const TimedRun run = run_vec_add(a, b, n, kCanary, o.tail_guard, o.plan);
    const std::vector<float> want = cpu_vec_add(a, b, n);
    const std::span<const float> got(run.out.data(), n);
    const CloseReport close = check_close(got, want, o.tolerance);
    const std::size_t overwritten =
        canary_overwrites(std::span<const float>(run.out).subspan(n), kCanary);
    Row v = timed_row("vec_add", run);
    v.gbs = 12.0 * static_cast<double>(n) / (v.event_median_ms * 1e-3) / 1e9;
    v.ok = close.ok() && overwritten == 0;
    v.check = close.ok() ? "PASS" : describe(close, got, want);
    if (overwritten > 0)
      v.check = fmt::format("FAIL: wrote {} floats past c[{}] (out of bounds: no tail guard)",
                            overwritten, n - 1);
    if (!o.tail_guard && o.exact_alloc)
      rep.notes.push_back(
          "--exact-alloc: the unguarded tail wrote past the allocation, where this program cannot "
          "see it; run it under compute-sanitizer to get the report");
    if (!o.tail_guard && n % 256 == 0)
      rep.notes.push_back(fmt::format(
          "--no-tail-guard with n = {}, a multiple of 256: no tail, nothing to corrupt", n));
    rep.memory_rows.push_back(v);
  }

  std::vector<MatmulKernel> todo;
  for (const auto& s : matmul_shapes())
    if (selected(o, s.name)) todo.push_back(s.kernel);
  if (!todo.empty()) {
    const auto n = static_cast<std::size_t>(o.n);
    const std::vector<float> a = random_values(n * n, o.seed + 2);
    const std::vector<float> b = random_values(n * n, o.seed + 3);
    const std::vector<std::size_t> rows = rows_to_verify(n);
    const std::vector<float> want = cpu_matmul_rows(a, b, n, rows);
    if (rows.size() < n)
      rep.notes.push_back(fmt::format(
          "matmul verified on {} of {} rows, spread evenly (a full CPU reference at this n "
          "takes minutes)",
          rows.size(), n));
    for (MatmulKernel k : todo) {
      const MatmulShape& shape = shape_of(k);
      MatmulOptions mo;
      mo.drop_second_sync = o.drop_second_sync && k == MatmulKernel::kTiled;
      mo.keep_every_output = mo.drop_second_sync;
      const TimedRun run = run_matmul(k, a, b, o.n, o.plan, mo);
      Row row = timed_row(std::string(shape.name), run);
      row.tflops = tflops(o.n, row.event_median_ms * 1e-3);
      const std::vector<float> got = gather_rows(run.out, n, rows);
      const CloseReport close = check_close(got, want, o.tolerance);
      row.ok = close.ok();
      row.check = close.ok() ? "PASS" : describe(close, got, want);
      if (mo.keep_every_output) {
        std::size_t bad_runs = 0, worst = 0;
        for (const auto& out : run.every_out) {
          const CloseReport c = check_close(gather_rows(out, n, rows), want, o.tolerance);
          if (!c.ok()) ++bad_runs;
          worst = std::max(worst, c.mismatches);
        }
        if (bad_runs > 0) {
          row.ok = false;
          row.check = fmt::format(
              "FAIL: {} of {} runs corrupted (worst {} of {} elements): the race of the dropped "
              "second __syncthreads()",
              bad_runs, run.every_out.size(), worst, want.size());
        } else {
          rep.notes.push_back(
              fmt::format("--drop-second-sync: the race did not fire in {} runs; it is still a bug "
                          "(try more --reps or a larger --n)",
                          run.every_out.size()));
        }
      }
      if (k != MatmulKernel::kCublas) row.resources = matmul_resources(k);
      rep.matmul_rows.push_back(row);
    }
  }
  rep.gates = evaluate_gates(rep.memory_rows, rep.matmul_rows, o.n);

  const Row* lie = find(rep.matmul_rows, "naive");
  if (lie == nullptr && !rep.matmul_rows.empty()) lie = &rep.matmul_rows.front();
  if (lie == nullptr) lie = find(rep.memory_rows, "vec_add");
  if (lie != nullptr)
    rep.notes.push_back(fmt::format(
        "std::chrono around the asynchronous launch of {} read {} ms, CUDA events {} ms: "
        "it timed the enqueue, not the kernel",
        lie->kernel, ms(lie->chrono_enqueue_ms), ms(lie->event_median_ms)));
  return rep;
}

std::vector<Gate> evaluate_gates(const std::vector<Row>& memory_rows,
                                 const std::vector<Row>& matmul_rows, int n) {
  std::vector<Gate> gates;
  {
    Gate g;
    g.name = "vec_add >= 85% of copy bandwidth";
    const Row* copy = find(memory_rows, "copy");
    const Row* vec = find(memory_rows, "vec_add");
    if (copy != nullptr && vec != nullptr && copy->gbs > 0) {
      g.evaluated = true;
      g.value = vec->gbs / copy->gbs;
      g.pass = vec->ok && g.value >= 0.85;
      g.detail = vec->ok ? fmt::format("{:.1f}%", 100 * g.value) : "vec_add failed its check";
    }
    gates.push_back(g);
  }
  {
    Gate g;
    g.name = "tiled >= 4x naive";
    const Row* naive = find(matmul_rows, "naive");
    const Row* tiled = find(matmul_rows, "tiled");
    if (naive != nullptr && tiled != nullptr && tiled->event_median_ms > 0) {
      g.evaluated = true;
      g.value = naive->event_median_ms / tiled->event_median_ms;
      g.pass = naive->ok && tiled->ok && g.value >= 4.0;
      g.detail = naive->ok && tiled->ok ? fmt::format("{:.1f}x at n = {}", g.value, n)
                                        : "a kernel failed its check";
    }
    gates.push_back(g);
  }
  {
    Gate g;
    g.name = "best hand-written >= 50% of cuBLAS";
    const Row* blas = find(matmul_rows, "cublas");
    const Row* best = nullptr;
    for (const auto& r : matmul_rows)
      if (r.kernel != "cublas" && r.ok && (best == nullptr || r.tflops > best->tflops)) best = &r;
    if (blas != nullptr && best != nullptr && blas->tflops > 0) {
      g.evaluated = true;
      g.value = best->tflops / blas->tflops;
      g.pass = blas->ok && g.value >= 0.5;
      g.detail = fmt::format("{}: {:.1f}% at n = {} (the goal is stated at n = 4096)", best->kernel,
                             100 * g.value, n);
    }
    gates.push_back(g);
  }
  return gates;
}

std::string render(const MeasureReport& r) {
  std::string out;
  const auto& d = r.device;
  out += gpulab::cuda::device_line(d);
  out += fmt::format(
      "timing   CUDA events, median of {} after {} warm-up; chrono = std::chrono around one "
      "launch, "
      "no sync\n",
      r.options.plan.reps, r.options.plan.warmup);
  if (!r.memory_rows.empty()) {
    out += fmt::format("\nmemory-bound, vec_add n = {} floats, copy {} MiB\n",
                       gpulab::with_commas(r.options.vec_n), r.options.copy_bytes >> 20);
    const Row* copy = find(r.memory_rows, "copy");
    Table t;
    t.column("kernel", L)
        .column("check", L)
        .column("event ms")
        .column("chrono ms")
        .column("GB/s")
        .column("% of copy");
    for (const auto& row : r.memory_rows)
      t.row({row.kernel, row.ok ? (row.check == "n/a" ? "n/a" : "PASS") : "FAIL",
             ms(row.event_median_ms), ms(row.chrono_enqueue_ms), fmt::format("{:.1f}", row.gbs),
             copy != nullptr ? fmt::format("{:.1f}", 100 * row.gbs / copy->gbs) : "-"});
    out += t.render();
  }
  if (!r.matmul_rows.empty()) {
    out += fmt::format("\nmatmul, n = {} ({:.2f} GFLOP per multiply)\n", r.options.n,
                       matmul_flops(r.options.n) / 1e9);
    const Row* naive = find(r.matmul_rows, "naive");
    const Row* blas = find(r.matmul_rows, "cublas");
    Table t;
    t.column("kernel", L)
        .column("check", L)
        .column("event ms")
        .column("chrono ms")
        .column("TFLOP/s");
    t.column("x naive")
        .column("% of cuBLAS")
        .column("regs")
        .column("spill B")
        .column("blocks/SM")
        .column("occupancy %");
    for (const auto& row : r.matmul_rows) {
      const auto& res = row.resources;
      t.row({row.kernel, row.ok ? "PASS" : "FAIL", ms(row.event_median_ms),
             ms(row.chrono_enqueue_ms), fmt::format("{:.2f}", row.tflops),
             naive != nullptr ? fmt::format("{:.1f}", naive->event_median_ms / row.event_median_ms)
                              : "-",
             blas != nullptr ? fmt::format("{:.1f}", 100 * row.tflops / blas->tflops) : "-",
             res ? std::to_string(res->registers) : "-",
             res ? std::to_string(res->local_bytes) : "-",
             res ? std::to_string(res->blocks_per_sm) : "-",
             res ? fmt::format("{:.0f}", 100 * res->occupancy) : "-"});
    }
    out += t.render();
  }
  out += "\n";
  for (const auto& rows : {&r.memory_rows, &r.matmul_rows})
    for (const auto& row : *rows)
      if (!row.ok)
        out += fmt::format("FAIL {}: {}\n", row.kernel, row.check.substr(row.check.find(':') + 2));
  Table g;
  g.column("gate", L).column("verdict", L).column("measured", L);
  for (const auto& gate : r.gates)
    g.row({gate.name, gate.evaluated ? (gate.pass ? "PASS" : "FAIL") : "not run", gate.detail});
  out += g.render();
  for (const auto& note : r.notes) out += fmt::format("note: {}\n", note);
  return out;
}

gpulab::Json to_json(const MeasureReport& r) {
  gpulab::Json j;
  j["device"] = gpulab::cuda::device_json(r.device);
  j["n"] = r.options.n;
  j["vec_n"] = r.options.vec_n;
  j["reps"] = r.options.plan.reps;
  j["warmup"] = r.options.plan.warmup;
  auto rows = [](const std::vector<Row>& rs) {
    gpulab::Json a = gpulab::Json::array();
    for (const auto& row : rs) {
      gpulab::Json o = {{"kernel", row.kernel},
                        {"ok", row.ok},
                        {"check", row.check},
                        {"event_median_ms", row.event_median_ms},
                        {"event_min_ms", row.event_min_ms},
                        {"chrono_enqueue_ms", row.chrono_enqueue_ms}};
      if (row.gbs > 0) o["gbs"] = row.gbs;
      if (row.tflops > 0) o["tflops"] = row.tflops;
      if (row.resources)
        o["resources"] = {{"registers", row.resources->registers},
                          {"local_bytes", row.resources->local_bytes},
                          {"static_smem_bytes", row.resources->static_smem_bytes},
                          {"threads_per_block", row.resources->threads_per_block},
                          {"blocks_per_sm", row.resources->blocks_per_sm},
                          {"occupancy", row.resources->occupancy}};
      a.push_back(o);
    }
    return a;
  };
  j["memory"] = rows(r.memory_rows);
  j["matmul"] = rows(r.matmul_rows);
  j["gates"] = gpulab::Json::array();
  for (const auto& g : r.gates)
    j["gates"].push_back(
        {{"gate", g.name}, {"evaluated", g.evaluated}, {"pass", g.pass}, {"value", g.value}});
  j["notes"] = r.notes;
  j["all_checks_pass"] = r.all_checks_pass();
  return j;
}

std::string render_model(int n, const Roof& roof) {
  std::string out = fmt::format(
      "matmul roofline model, n = {}: 2n^3 = {:.3f} GFLOP per multiply (an FMA counts as 2 FLOP)\n"
      "roof: {} datasheet, {:.0f} GB/s DRAM, {:.1f} TFLOP/s FP32, no cache reuse assumed\n\n",
      n, matmul_flops(n) / 1e9, roof.gpu, roof.bandwidth_gbs, roof.fp32_tflops);
  Table t;
  t.column("kernel", L)
      .column("C tile", L)
      .column("threads")
      .column("per thread", L)
      .column("grid", L);
  t.column("global loads/FMA")
      .column("smem loads/FMA")
      .column("FLOP/B")
      .column("roof TFLOP/s")
      .column("roof ms");
  for (const auto& s : matmul_shapes()) {
    if (s.kernel == MatmulKernel::kCublas) {
      t.row({std::string(s.name), "-", "-", "-", "-", "-", "-", "-", "-", "-"});
      continue;
    }
    const double roof_tf = roofline_tflops(s, roof);
    const bool naive = s.kernel == MatmulKernel::kNaive;
    t.row({std::string(s.name), fmt::format("{}x{}", s.block_rows, s.block_cols),
           std::to_string(s.threads), fmt::format("{}x{}", s.micro_rows, s.micro_cols),
           fmt::format("{}x{}", n / s.block_cols, n / s.block_rows),
           fmt::format("{:.3f}", global_loads_per_fma(s)),
           naive ? "-" : fmt::format("{:.3f}", inner_loads_per_fma(s)),
           fmt::format("{:.2f}", arithmetic_intensity(s)), fmt::format("{:.2f}", roof_tf),
           fmt::format("{:.2f}", matmul_flops(n) / (roof_tf * 1e12) * 1e3)});
  }
  out += t.render();
  const double vec_ai = 1.0 / 12.0;  // one add per two 4-byte loads and one store
  out += fmt::format(
      "\nvec_add: 1 FLOP per 12 B = {:.3f} FLOP/B, roof {:.3f} TFLOP/s: only bandwidth matters\n",
      vec_ai, vec_ai * roof.bandwidth_gbs / 1e3);
  return out;
}

gpulab::Json model_json(int n, const Roof& roof) {
  gpulab::Json j = {{"n", n},
                    {"gflop", matmul_flops(n) / 1e9},
                    {"gpu", roof.gpu},
                    {"bandwidth_gbs", roof.bandwidth_gbs},
                    {"fp32_tflops", roof.fp32_tflops}};
  j["kernels"] = gpulab::Json::array();
  for (const auto& s : matmul_shapes()) {
    if (s.kernel == MatmulKernel::kCublas) continue;
    j["kernels"].push_back({{"kernel", s.name},
                            {"block_rows", s.block_rows},
                            {"block_cols", s.block_cols},
                            {"threads", s.threads},
                            {"micro_tile", fmt::format("{}x{}", s.micro_rows, s.micro_cols)},
                            {"global_loads_per_fma", global_loads_per_fma(s)},
                            {"inner_loads_per_fma", inner_loads_per_fma(s)},
                            {"flop_per_byte", arithmetic_intensity(s)},
                            {"roof_tflops", roofline_tflops(s, roof)}});
  }
  return j;
}

std::string render_launch(const LaunchConfig& cfg, std::uint64_t elements) {
  const auto& g = cfg.grid;
  const auto& b = cfg.block;
  const std::string problem = launch_problem(cfg);
  std::string out;
  out += fmt::format("block    {} x {} = {} threads\n", b.x, b.y, gpulab::with_commas(threads_per_block(b)));
  out += fmt::format("grid     {} x {} = {} blocks\n", g.x, g.y, gpulab::with_commas(std::uint64_t{g.x} * g.y));
  out += fmt::format(
      "threads  {} launched for {} elements, {} idle past the edge (the tail guard switches them "
      "off)\n",
      gpulab::with_commas(total_threads(cfg)), gpulab::with_commas(elements), gpulab::with_commas(idle_tail_threads(cfg, elements)));
  out += fmt::format("launch   {}\n",
                     problem.empty() ? "valid on every sm_75+ GPU" : "INVALID: " + problem);
  return out;
}

gpulab::Json launch_json(const LaunchConfig& cfg, std::uint64_t elements) {
  return {{"grid", {cfg.grid.x, cfg.grid.y, cfg.grid.z}},
          {"block", {cfg.block.x, cfg.block.y, cfg.block.z}},
          {"elements", elements},
          {"threads", total_threads(cfg)},
          {"idle_threads", idle_tail_threads(cfg, elements)},
          {"problem", launch_problem(cfg)}};
}

std::string render_ptxas(const std::vector<PtxasEntry>& entries) {
  Table t;
  t.column("kernel", L)
      .column("arch", L)
      .column("regs")
      .column("spill stores B")
      .column("spill loads B");
  t.column("stack B").column("smem B");
  for (const auto& e : entries)
    t.row({e.kernel, e.arch, std::to_string(e.registers), std::to_string(e.spill_store_bytes),
           std::to_string(e.spill_load_bytes), std::to_string(e.stack_bytes),
           std::to_string(e.smem_bytes)});
  return t.render();
}

gpulab::Json ptxas_json(const std::vector<PtxasEntry>& entries) {
  gpulab::Json a = gpulab::Json::array();
  for (const auto& e : entries)
    a.push_back({{"kernel", e.kernel},
                 {"arch", e.arch},
                 {"registers", e.registers},
                 {"spill_store_bytes", e.spill_store_bytes},
                 {"spill_load_bytes", e.spill_load_bytes},
                 {"stack_bytes", e.stack_bytes},
                 {"smem_bytes", e.smem_bytes}});
  return a;
}

std::string default_ptxas_report_path() {
  return KERNELS_PTXAS_REPORT;
}

}  // namespace kernels
