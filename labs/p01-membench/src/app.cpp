#include "membench/app.hpp"

#include <fmt/core.h>
#include <sys/sysinfo.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <utility>

#include "gpulab/errors.hpp"
#include "gpulab/json.hpp"
#include "gpulab/plot.hpp"
#include "gpulab/progress.hpp"
#include "gpulab/table.hpp"
#include "membench/cache_topology.hpp"
#include "membench/fma_peak.hpp"
#include "membench/perf_counters.hpp"
#include "membench/plateaus.hpp"
#include "membench/pointer_chase.hpp"
#include "membench/roofline.hpp"
#include "membench/roofline_kernels.hpp"
#include "membench/sizes.hpp"
#include "membench/stream.hpp"
#include "membench/stride.hpp"

namespace membench {
namespace {

using gpulab::Json;
using gpulab::Table;
constexpr auto kLeft = Table::Align::kLeft;

// What one run has found so far; later sections (roofline) reuse earlier ones.
struct Context {
  Context(const Options& o, CacheTopology t, CpuDescription c)
      : opts(o), topo(std::move(t)), cpu(std::move(c)) {}

  const Options& opts;
  CacheTopology topo;
  CpuDescription cpu;
  int threads = 1;
  Json doc = Json::object();
  std::string text;
  std::vector<std::string> failures;
  std::optional<double> peak_all_gflops;  // wall clock, the same clock as bandwidth and kernels
  std::optional<double>
      busy_fraction;  // FMA wall-clock / CPU-clock throughput; < 1 on a busy machine
  std::optional<double> triad_all_gbs;
  std::vector<std::string> plots;     // what --plot wrote or why it could not
  std::vector<std::string> write_errors;  // pictures that failed to be written: the run fails
  std::vector<std::string> warnings;  // about the measurement itself: stderr, after the results

  template <class... Args>
  void say(fmt::format_string<Args...> f, Args&&... args) {
    text += fmt::format(f, std::forward<Args>(args)...);
    text += '\n';
  }
};

std::size_t physical_memory() {
  struct sysinfo si {};
  if (sysinfo(&si) != 0) return 0;
  return static_cast<std::size_t>(si.totalram) * si.mem_unit;
}

std::size_t llc_or_default(const CacheTopology& topo) {
  return topo.empty() ? std::size_t{32} << 20
                      : topo.last_level_size();  // unknown: assume a large LLC
}

void write_plot(Context& ctx, const gpulab::PlotSpec& spec, const std::string& file) {
  const auto path = (std::filesystem::path(ctx.opts.plot_dir) / file).string();
  try {
    gpulab::write_svg_plot(spec, path);
    ctx.plots.push_back(fmt::format("wrote {}", path));
  } catch (const gpulab::Unsupported& e) {
    ctx.plots.push_back(fmt::format("{} not written: {}", path, e.what()));
  } catch (const gpulab::RunError& e) {
    // Unlike a missing gnuplot, a write that failed (full disk, read-only) fails the run, after
    // the results are printed: a script must not take a missing picture for a written one.
    ctx.plots.push_back(fmt::format("{} not written: {}", path, e.what()));
    ctx.write_errors.push_back(fmt::format("--plot: {}", e.what()));
  }
}

// ---- latency ---------------------------------------------------------------

void run_latency(Context& ctx) {
  const Options& o = ctx.opts;
  const auto sizes = sweep_sizes(o.min_bytes, o.max_bytes, o.steps);
  ChaseOptions co;
  co.loads = o.loads;
  co.reps = o.reps;
  co.sequential = o.sequential;
  co.huge_pages = !o.small_pages;
  co.seed = o.seed;

  std::optional<CacheCounters> counters;
  if (o.counters) counters.emplace();
  const bool counting = counters && counters->available();

  ctx.say("== latency (pointer chase) ==");
  ctx.say(
      "{} cycle, one pointer per 64-byte line, {} dependent loads x {} reps, min of thread CPU "
      "time{}",
      o.sequential ? "SEQUENTIAL (identity)" : "random (Sattolo)", o.loads, o.reps,
      o.small_pages ? ", 4 KiB pages" : ", huge pages advised");
  Table t;
  t.column("size").column("ns/load").column("median ns").column("wall ns").column("level", kLeft);
  if (counting) t.column("refs/load").column("misses/load");

  Json rows = Json::array();
  std::vector<double> ns;
  gpulab::Progress progress("latency sweep", sizes.size());
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    const std::size_t bytes = sizes[i];
    const std::size_t n = bytes / kCacheLine;
    gpulab::Rng rng(o.seed + i);
    const auto next = o.sequential ? sequential_cycle(n) : sattolo_cycle(n, rng);
    if (cycle_length_from_zero(next) != n)
      throw gpulab::RunError(
          fmt::format("the chase at {} is not one cycle over all {} lines", format_size(bytes), n));
    const ChaseBuffer buffer(next, co.huge_pages);
    (void)chase(buffer.head(), n);  // warm-up lap: lines and pages in
    if (counting) counters->start();
    const auto timing = time_chase(buffer, co);
    CacheCounters::Counts c;
    if (counting) c = counters->stop();
    ns.push_back(timing.ns_min);
    const std::string level = ctx.topo.label_for(bytes);
    std::vector<std::string> cells = {format_size(bytes), fmt::format("{:.2f}", timing.ns_min),
                                      fmt::format("{:.2f}", timing.ns_median),
                                      fmt::format("{:.2f}", timing.wall_ns_min), "<- " + level};
    Json row = {{"bytes", bytes},
                {"ns_per_load", timing.ns_min},
                {"ns_median", timing.ns_median},
                {"wall_ns", timing.wall_ns_min},
                {"level", level}};
    if (counting) {
      const double total = static_cast<double>(o.loads) * o.reps;
      cells.push_back(fmt::format("{:.3f}", static_cast<double>(c.references) / total));
      cells.push_back(fmt::format("{:.3f}", static_cast<double>(c.misses) / total));
      row["cache_references"] = c.references;
      row["cache_misses"] = c.misses;
    }
    t.row(cells);
    rows.push_back(row);
    progress.update(i + 1);
  }
  ctx.text += t.render();
  if (o.counters)
    ctx.say("hardware counters: {}",
            counting ? "cache-references/cache-misses per load (perf_event_open)"
                     : "unavailable: " + counters->reason());

  const auto plateaus = detect_plateaus(sizes, ns);
  const auto cmp = compare_plateaus(ctx.topo, plateaus);
  ctx.say("plateaus read off the curve (a cliff = +25% or more per step):");
  Table p;
  p.column("plateau", kLeft).column("from").column("to").column("ns/load");
  Json pj = Json::array();
  for (std::size_t i = 0; i < plateaus.size(); ++i) {
    p.row({fmt::format("#{}", i + 1), format_size(plateaus[i].first_bytes),
           format_size(plateaus[i].last_bytes), fmt::format("{:.2f}", plateaus[i].ns)});
    pj.push_back({{"first_bytes", plateaus[i].first_bytes},
                  {"last_bytes", plateaus[i].last_bytes},
                  {"ns", plateaus[i].ns}});
  }
  ctx.text += p.render();
  ctx.say("curve vs the machine's cache description ({}):", ctx.topo.source);
  Table c;
  c.column("level", kLeft).column("sysfs").column("curve").column("verdict", kLeft);
  Json cj = Json::array();
  for (const auto& row : cmp) {
    c.row({row.level, row.sysfs_bytes ? format_size(row.sysfs_bytes) : "-",
           row.curve_bytes ? format_size(row.curve_bytes) : "-", row.note});
    cj.push_back({{"level", row.level},
                  {"sysfs_bytes", row.sysfs_bytes},
                  {"curve_bytes", row.curve_bytes},
                  {"agree", row.agree}});
  }
  ctx.text += c.render();
  ctx.doc["latency"] = {
      {"sequential", o.sequential},
      {"loads", o.loads},
      {"reps", o.reps},
      {"points", rows},
      {"plateaus", pj},
      {"comparison", cj},
      {"counters",
       counting ? Json("available") : Json(counters ? counters->reason() : "not requested")}};

  if (!o.plot_dir.empty()) {
    gpulab::PlotSpec spec;
    spec.title = fmt::format("Pointer-chase latency, {}", ctx.cpu.model);
    spec.x_label = "buffer size (KiB)";
    spec.y_label = "ns per dependent load";
    spec.log_x = spec.log_y = true;
    gpulab::PlotSeries curve{o.sequential ? "sequential chase" : "random chase", {}, {}, false};
    for (std::size_t i = 0; i < sizes.size(); ++i) {
      curve.x.push_back(static_cast<double>(sizes[i]) / 1024.0);
      curve.y.push_back(ns[i]);
    }
    spec.series.push_back(curve);
    const double lo = *std::min_element(ns.begin(), ns.end()),
                 hi = *std::max_element(ns.begin(), ns.end());
    for (const auto& lvl : ctx.topo.data_levels) {  // a vertical line at each cache size
      const double x = static_cast<double>(lvl.size) / 1024.0;
      spec.series.push_back({fmt::format("L{} = {} (sysfs)", lvl.level, format_size(lvl.size)),
                             {x, x},
                             {lo, hi},
                             false});
    }
    write_plot(ctx, spec, "latency.svg");
  }
}

// ---- bandwidth -------------------------------------------------------------

std::size_t stream_elements(const Context& ctx) {
  if (ctx.opts.array_bytes)
    return std::max<std::size_t>(ctx.opts.array_bytes / sizeof(double), 1024);
  return stream_elements_for(llc_or_default(ctx.topo));
}

StreamResult stream_on(Context& ctx, int threads, bool progress_label) {
  WorkerPool pool(threads, ctx.opts.cpu);
  gpulab::Progress progress(progress_label ? "stream (all threads)" : "stream (1 thread)", 1);
  StreamConfig cfg;
  cfg.elements = stream_elements(ctx);
  cfg.ntimes = ctx.opts.ntimes;
  auto r = run_stream(pool, cfg);
  progress.update(1);
  if (!r.valid)
    ctx.failures.push_back(fmt::format("STREAM ({} threads): {}", threads, r.validation));
  return r;
}

void run_bandwidth(Context& ctx) {
  const std::size_t n = stream_elements(ctx);
  const std::size_t llc = ctx.topo.last_level_size();
  const StreamResult one = stream_on(ctx, 1, false);
  const StreamResult all = stream_on(ctx, ctx.threads, true);
  ctx.triad_all_gbs = all.rate(StreamKernel::kTriad).best_gbs;

  ctx.say("== bandwidth (stream) ==");
  ctx.say(
      "STREAM rules: 3 arrays x {} doubles ({} each{}), NTIMES={} (first dropped), best rate, 1 "
      "GB/s = 1e9 B/s",
      n, format_size(n * sizeof(double)),
      llc ? (n * sizeof(double) >= 4 * llc ? ", >= 4x LLC"
                                           : ", SMALLER than 4x LLC: caches inflate the rates")
          : "",
      ctx.opts.ntimes);
  Table t;
  t.column("kernel", kLeft)
      .column("bytes/elem")
      .column("1 thread GB/s")
      .column(fmt::format("{} threads GB/s", all.threads))
      .column("avg s")
      .column("min s")
      .column("max s");
  Json kernels = Json::array();
  for (auto k : kAllStreamKernels) {
    const auto& a = one.rate(k);
    const auto& b = all.rate(k);
    t.row({name(k), fmt::format("{}", stream_bytes(k, 1)), fmt::format("{:.1f}", a.best_gbs),
           fmt::format("{:.1f}", b.best_gbs), fmt::format("{:.6f}", b.avg_s),
           fmt::format("{:.6f}", b.min_s), fmt::format("{:.6f}", b.max_s)});
    kernels.push_back({{"kernel", name(k)},
                       {"bytes_per_element", stream_bytes(k, 1)},
                       {"gbs_1_thread", a.best_gbs},
                       {"gbs_all_threads", b.best_gbs},
                       {"avg_s", b.avg_s},
                       {"min_s", b.min_s},
                       {"max_s", b.max_s}});
  }
  ctx.text += t.render();
  ctx.say("read  : {:.1f} GB/s   write : {:.1f} GB/s   (1 thread; {} threads: {:.1f} / {:.1f})",
          one.rate(StreamKernel::kRead).best_gbs, one.rate(StreamKernel::kWrite).best_gbs,
          all.threads, all.rate(StreamKernel::kRead).best_gbs,
          all.rate(StreamKernel::kWrite).best_gbs);
  ctx.say("{} {} (1 thread)", one.valid ? "PASS" : "FAIL", one.validation);
  ctx.say("{} {} ({} threads)", all.valid ? "PASS" : "FAIL", all.validation, all.threads);
  ctx.doc["bandwidth"] = {{"elements", n},
                          {"ntimes", ctx.opts.ntimes},
                          {"threads", all.threads},
                          {"kernels", kernels},
                          {"valid", one.valid && all.valid}};
}

// ---- peak ------------------------------------------------------------------

// Other processes on the machine show up as wall-clock FMA throughput well
// below what the cores deliver while they run; every wall-clock figure
// (bandwidth, the roofline kernels) is deflated by about as much.
void say_busy(Context& ctx) {
  if (!ctx.busy_fraction || *ctx.busy_fraction >= 0.8 || !ctx.warnings.empty()) return;
  ctx.warnings.push_back(fmt::format(
      "membench: note: this machine is busy: wall-clock FMA throughput is {:.0f}% of what its "
      "cores deliver while "
      "they run; wall-clock figures (bandwidth, roofline kernels) are deflated about as much",
      100.0 * *ctx.busy_fraction));
}

void run_peak(Context& ctx) {
  const CpuDescription& cpu = ctx.cpu;
  PeakResult one, all;
  {
    gpulab::Progress progress("peak FMA", 2);
    WorkerPool p1(1, ctx.opts.cpu);
    one = measure_peak(p1, cpu, ctx.opts.peak_iterations, ctx.opts.reps);
    progress.update(1);
    WorkerPool pn(ctx.threads, ctx.opts.cpu);
    all = measure_peak(pn, cpu, ctx.opts.peak_iterations, ctx.opts.reps);
    progress.update(2);
  }
  ctx.peak_all_gflops = all.wall_gflops;
  ctx.busy_fraction = all.wall_gflops / all.gflops;
  const double spec1 = spec_peak_gflops(1, cpu.clock_ghz, cpu.fp32_lanes);
  const double specn = spec_peak_gflops(ctx.threads, cpu.clock_ghz, cpu.fp32_lanes);
  ctx.say("== peak compute (FP32 FMA) ==");
  ctx.say(
      "kernel: {} x 12 independent FMA chains, {} fp32 lanes, {} iterations/thread, best of {} "
      "(per-thread CPU clocks)",
      cpu.isa, cpu.fp32_lanes, ctx.opts.peak_iterations, ctx.opts.reps);
  Table t;
  t.column("threads")
      .column("measured GFLOP/s")
      .column("wall GFLOP/s")
      .column("spec estimate GFLOP/s")
      .column("measured/spec")
      .column("FLOP/cycle/core");
  const auto row = [&](const PeakResult& r, double spec) {
    const double per_cycle = cpu.clock_ghz > 0 ? r.gflops / (cpu.clock_ghz * r.threads) : 0;
    t.row({fmt::format("{}", r.threads), fmt::format("{:.1f}", r.gflops),
           fmt::format("{:.1f}", r.wall_gflops), spec > 0 ? fmt::format("{:.1f}", spec) : "n/a",
           spec > 0 ? fmt::format("{:.2f}", r.gflops / spec) : "n/a",
           per_cycle > 0 ? fmt::format("{:.1f}", per_cycle) : "n/a"});
  };
  row(one, spec1);
  row(all, specn);
  ctx.text += t.render();
  ctx.say(
      "spec estimate = cores x clock x SIMD width x 2 = {} x {:.2f} GHz x {} x 2 ({}); it ignores "
      "the number of FMA pipes",
      ctx.threads, cpu.clock_ghz, cpu.fp32_lanes, cpu.clock_source);
  say_busy(ctx);
  ctx.doc["peak"] = {{"isa", cpu.isa},
                     {"fp32_lanes", cpu.fp32_lanes},
                     {"clock_ghz", cpu.clock_ghz},
                     {"gflops_1_thread", one.gflops},
                     {"gflops_all_threads", all.gflops},
                     {"wall_gflops_all_threads", all.wall_gflops},
                     {"threads", all.threads},
                     {"spec_estimate_gflops", specn}};
}

// ---- roofline on this machine ---------------------------------------------

void run_placement(Context& ctx) {
  const Options& o = ctx.opts;
  if (!ctx.peak_all_gflops || !ctx.triad_all_gbs) {
    // Run on its own: measure what the roof needs, without printing those sections.
    Context inner(o, ctx.topo, ctx.cpu);
    inner.threads = ctx.threads;
    if (!ctx.peak_all_gflops) run_peak(inner);
    if (!ctx.triad_all_gbs) run_bandwidth(inner);
    ctx.peak_all_gflops = inner.peak_all_gflops;
    ctx.busy_fraction = inner.busy_fraction;
    ctx.triad_all_gbs = inner.triad_all_gbs;
    for (auto& f : inner.failures) ctx.failures.push_back(f);
  }
  const double peak = *ctx.peak_all_gflops, bw = *ctx.triad_all_gbs;
  const double ridge = ridge_point(peak, bw);
  const double spec = spec_peak_gflops(ctx.threads, ctx.cpu.clock_ghz, ctx.cpu.fp32_lanes);

  WorkerPool pool(ctx.threads, o.cpu);
  struct Placed {
    std::string name;
    double ai, measured;
    bool correct;
  };
  std::vector<Placed> placed;
  const std::size_t add_n =
      std::max<std::size_t>(4 * llc_or_default(ctx.topo) / sizeof(float), 1 << 20);
  gpulab::Progress progress("roofline kernels", 1 + o.blocks.size());
  const auto va = time_vector_add(pool, add_n, std::max(o.reps, 3));
  placed.push_back({"vector_add", kVectorAddAi, va.gflops, va.correct});
  progress.update(1);
  for (std::size_t i = 0; i < o.blocks.size(); ++i) {
    const int b = o.blocks[i];
    const auto mm = time_blocked_matmul(pool, o.matmul_n, b, o.quick ? 2 : 1);
    placed.push_back({fmt::format("matmul b={}", b), blocked_matmul_ai(b), mm.gflops, mm.correct});
    progress.update(2 + i);
  }

  ctx.say("== roofline ==");
  ctx.say(
      "roof: peak {:.1f} GFLOP/s (measured FMA, {} threads), bandwidth {:.1f} GB/s (STREAM triad, "
      "{} threads), both wall clock",
      peak, ctx.threads, bw, ctx.threads);
  ctx.say(
      "ridge = {:.1f} / {:.1f} = {:.2f} FLOP/byte (spec-estimate peak {:.1f} GFLOP/s would put it "
      "at {:.2f})",
      peak, bw, ridge, spec, spec > 0 ? ridge_point(spec, bw) : 0.0);
  const std::size_t mm_bytes = 3 * static_cast<std::size_t>(o.matmul_n) *
                               static_cast<std::size_t>(o.matmul_n) * sizeof(float);
  ctx.say("vector_add n={} floats; matmul N={} (3 matrices = {}, LLC {})", add_n, o.matmul_n,
          format_size(mm_bytes),
          ctx.topo.empty() ? "unknown" : format_size(ctx.topo.last_level_size()));
  Json kj = Json::array();
  gpulab::PlotSeries points{"measured kernels", {}, {}, true};
  for (const auto& k : placed) {
    const double ceiling = attainable(peak, bw, k.ai);
    const double pct = 100.0 * k.measured / ceiling;
    const auto verdict = bound_verdict(k.ai, ridge);
    // The curriculum's line format, one line per kernel.
    ctx.say(
        "{}: AI{}{:.3g}  predicted ceiling {:5.1f} GFLOP/s  measured {:5.1f}  -> {} ({:.0f}% of "
        "roof){}",
        k.name, k.name == "vector_add" ? "=" : "\u2248", k.ai, ceiling, k.measured, verdict, pct,
        k.correct ? "" : "  FAIL: wrong result");
    if (!k.correct) ctx.failures.push_back(k.name + " computed a wrong result");
    kj.push_back({{"kernel", k.name},
                  {"ai", k.ai},
                  {"ceiling_gflops", ceiling},
                  {"measured_gflops", k.measured},
                  {"percent_of_roof", pct},
                  {"verdict", verdict},
                  {"correct", k.correct}});
    points.x.push_back(k.ai);
    points.y.push_back(k.measured);
  }
  ctx.doc["roofline"] = {{"peak_gflops", peak},
                         {"bandwidth_gbs", bw},
                         {"ridge", ridge},
                         {"spec_peak_gflops", spec},
                         {"kernels", kj}};

  if (!o.plot_dir.empty()) {
    gpulab::PlotSpec spec_plot;
    spec_plot.title = fmt::format("Roofline, {} ({} threads)", ctx.cpu.model, ctx.threads);
    spec_plot.x_label = "arithmetic intensity (FLOP/byte)";
    spec_plot.y_label = "GFLOP/s";
    spec_plot.log_x = spec_plot.log_y = true;
    gpulab::PlotSeries roof{"roof = min(peak, AI x triad bandwidth)", {}, {}, false};
    for (double ai = 1.0 / 64; ai <= 1024.0; ai *= std::sqrt(2.0)) {
      roof.x.push_back(ai);
      roof.y.push_back(attainable(peak, bw, ai));
    }
    spec_plot.series.push_back(roof);
    spec_plot.series.push_back(
        {fmt::format("ridge {:.2f} FLOP/byte", ridge), {ridge}, {peak}, true});
    spec_plot.series.push_back(points);
    write_plot(ctx, spec_plot, "roofline.svg");
  }
  say_busy(ctx);
}

// ---- roofline from spec sheets (deterministic) -----------------------------

void run_spec(Context& ctx) {
  const Options& o = ctx.opts;
  std::vector<Accelerator> chips(accelerator_table().begin(), accelerator_table().end());
  if (o.peak_tflops && o.bandwidth_tbs) {
    chips = {{"custom", *o.peak_tflops, *o.bandwidth_tbs, 0, "--peak-tflops / --bandwidth-tbs"}};
  }
  ctx.say("== roofline (spec sheets, dense 16-bit tensor peak) ==");
  Table t;
  t.column("accelerator", kLeft)
      .column("peak TFLOP/s")
      .column("bandwidth TB/s")
      .column("ridge FLOP/B")
      .column(fmt::format("at AI={:g} TFLOP/s", o.ai))
      .column("% of peak")
      .column("verdict", kLeft);
  Json rows = Json::array();
  for (const auto& c : chips) {
    const double ridge = ridge_point(c.peak_tflops, c.bandwidth_tbs);
    const double att = attainable(c.peak_tflops, c.bandwidth_tbs, o.ai);
    t.row({std::string(c.name), fmt::format("{:.1f}", c.peak_tflops),
           fmt::format("{:.3f}", c.bandwidth_tbs), fmt::format("{:.1f}", ridge),
           fmt::format("{:.2f}", att), fmt::format("{:.2f}%", 100.0 * att / c.peak_tflops),
           std::string(bound_verdict(o.ai, ridge))});
    rows.push_back({{"name", c.name},
                    {"peak_tflops", c.peak_tflops},
                    {"bandwidth_tbs", c.bandwidth_tbs},
                    {"ridge", ridge},
                    {"ai", o.ai},
                    {"attainable_tflops", att},
                    {"verdict", bound_verdict(o.ai, ridge)},
                    {"source", c.source}});
  }
  ctx.text += t.render();
  Json doc = {{"ai", o.ai}, {"accelerators", rows}};

  if (o.decode) {
    const double gb = o.params_b * o.bytes_per_param;
    const double dai = decode_ai(o.bytes_per_param);
    ctx.say(
        "== batch-1 decode ceiling: {:g}B params x {:g} B/param = {:.1f} GB read per token (AI = "
        "{:.2f} FLOP/B) ==",
        o.params_b, o.bytes_per_param, gb, dai);
    Table d;
    d.column("accelerator", kLeft)
        .column("bandwidth TB/s")
        .column("ms/token")
        .column("tokens/s")
        .column("ridge/AI")
        .column("compute used");
    Json dj = Json::array();
    for (const auto& c : chips) {
      const double tps = decode_tokens_per_s(c.bandwidth_tbs, o.params_b, o.bytes_per_param);
      const double used = attainable(c.peak_tflops, c.bandwidth_tbs, dai) / c.peak_tflops;
      d.row({std::string(c.name), fmt::format("{:.3f}", c.bandwidth_tbs),
             fmt::format("{:.2f}", 1000.0 / tps), fmt::format("{:.0f}", tps),
             fmt::format("{:.0f}x", ridge_point(c.peak_tflops, c.bandwidth_tbs) / dai),
             fmt::format("{:.2f}%", 100.0 * used)});
      dj.push_back({{"name", c.name},
                    {"tokens_per_s", tps},
                    {"ms_per_token", 1000.0 / tps},
                    {"compute_used", used}});
    }
    ctx.text += d.render();
    doc["decode"] = {{"params_b", o.params_b},
                     {"bytes_per_param", o.bytes_per_param},
                     {"ai", dai},
                     {"accelerators", dj}};
  }
  ctx.say("sources:");
  for (const auto& c : chips) ctx.say("  {}: {}", c.name, c.source);
  ctx.doc["spec_roofline"] = doc;
}

// ---- stride ----------------------------------------------------------------

void run_stride(Context& ctx) {
  const std::size_t n =
      (ctx.opts.array_bytes ? ctx.opts.array_bytes : 4 * llc_or_default(ctx.topo)) / sizeof(float);
  if (ctx.opts.cpu >= 0) pin_current_thread(ctx.opts.cpu);
  gpulab::Progress progress("stride sweep", 1);
  const auto pts = stride_sweep(n, ctx.opts.max_stride, std::max(ctx.opts.reps, 2));
  progress.update(1);
  ctx.say("== strided read (1 thread, {} floats = {}, best of {} on the thread's CPU clock) ==", n,
          format_size(n * sizeof(float)), std::max(ctx.opts.reps, 2));
  Table t;
  t.column("stride")
      .column("bytes apart")
      .column("useful GB/s")
      .column("line GB/s")
      .column("lines/load");
  Json rows = Json::array();
  for (const auto& p : pts) {
    t.row({fmt::format("{}", p.stride), fmt::format("{}", p.stride * sizeof(float)),
           fmt::format("{:.2f}", p.effective_gbs), fmt::format("{:.2f}", p.line_gbs),
           fmt::format("{:.3f}", static_cast<double>(p.lines) / static_cast<double>(p.loads))});
    rows.push_back({{"stride", p.stride},
                    {"useful_gbs", p.effective_gbs},
                    {"line_gbs", p.line_gbs},
                    {"loads", p.loads},
                    {"lines", p.lines}});
  }
  ctx.text += t.render();
  ctx.say(
      "up to {} floats (64 bytes) apart the lines are shared and useful GB/s falls as 1/stride; "
      "past that every load",
      kCacheLine / sizeof(float));
  ctx.say("is a line of its own, and the neighbouring lines the prefetcher brings in go unused");
  ctx.doc["stride"] = rows;
}

}  // namespace

void apply_quick(Options& o) {
  const Options d;
  if (o.max_bytes == d.max_bytes) o.max_bytes = 64 << 20;
  if (o.loads == d.loads) o.loads = 200'000;
  if (o.reps == d.reps) o.reps = 5;  // many short repetitions: the minimum dodges other processes
  if (o.ntimes == d.ntimes) o.ntimes = 4;
  if (o.peak_iterations == d.peak_iterations) o.peak_iterations = 2'000'000;
  if (o.matmul_n == d.matmul_n) o.matmul_n = 512;
}

void validate(const Options& o) {
  using gpulab::UsageError;
  static const char* kParts[] = {"all", "latency", "bandwidth", "peak", "roofline", "stride"};
  if (std::find(std::begin(kParts), std::end(kParts), o.part) == std::end(kParts))
    throw UsageError(
        fmt::format("unknown part '{}' (all, latency, bandwidth, peak, roofline, stride)", o.part));
  if (o.min_bytes < kCacheLine)
    throw UsageError(fmt::format("--min must be at least {} bytes (one cache line)", kCacheLine));
  if (o.min_bytes > o.max_bytes)
    throw UsageError(fmt::format("--min {} is larger than --max {}", format_size(o.min_bytes),
                                 format_size(o.max_bytes)));
  if (o.max_bytes / kCacheLine > 0xffffffffULL)
    throw UsageError("--max is too large (at most 256 GiB)");
  const std::size_t mem = physical_memory();
  if (mem && o.max_bytes > mem / 2)
    throw UsageError(fmt::format("--max {} is more than half of this machine's memory ({})",
                                 format_size(o.max_bytes), format_size(mem)));
  if (mem && o.array_bytes * 3 > mem / 2)
    throw UsageError(fmt::format("--array {}: three such arrays need more than half of memory",
                                 format_size(o.array_bytes)));
  if (o.steps < 1 || o.steps > 16)
    throw UsageError("--steps must be between 1 and 16 points per doubling");
  if (o.loads < 1 || o.loads > 10'000'000'000ULL)
    throw UsageError("--loads must be between 1 and 1e10");
  if (o.reps < 1) throw UsageError("--reps must be at least 1");
  if (o.ntimes < 2) throw UsageError("--ntimes must be at least 2 (STREAM drops the first)");
  if (o.threads < 0) throw UsageError("--threads must be at least 1");
  if (o.peak_iterations < 1) throw UsageError("--peak-iterations must be at least 1");
  if (o.max_stride < 1 || o.max_stride > 65536)
    throw UsageError("--max-stride must be between 1 and 65536");
  if (o.blocks.empty()) throw UsageError("--blocks needs at least one block size");
  for (int b : o.blocks)
    if (b < 1 || o.matmul_n % b != 0)
      throw UsageError(fmt::format("block {} does not divide --matmul-n {}", b, o.matmul_n));
  if (o.matmul_n < 1 || o.matmul_n > 8192)
    throw UsageError("--matmul-n must be between 1 and 8192");
  if (o.peak_tflops.has_value() != o.bandwidth_tbs.has_value())
    throw UsageError("--peak-tflops and --bandwidth-tbs go together");
  // Written as !(x > 0) so that NaN is rejected too.
  if ((o.peak_tflops && !(*o.peak_tflops > 0)) || (o.bandwidth_tbs && !(*o.bandwidth_tbs > 0)))
    throw UsageError("--peak-tflops and --bandwidth-tbs must be positive");
  if (!(o.ai > 0) || !std::isfinite(o.ai)) throw UsageError("--ai must be a positive number");
  if (!(o.params_b > 0) || !(o.bytes_per_param > 0) || !std::isfinite(o.params_b) ||
      !std::isfinite(o.bytes_per_param))
    throw UsageError("--params-b and --bytes-per-param must be positive numbers");
  if (!(o.clock_ghz >= 0) || o.clock_ghz > 100)
    throw UsageError("--clock-ghz must be a clock in GHz");
  const bool spec_only = o.spec || o.peak_tflops || o.decode;
  if (spec_only && o.part != "roofline" && o.part != "all")
    throw UsageError("--spec, --peak-tflops and --decode belong to the roofline part");
}

int run(const Options& opts) {
  validate(opts);
  Context ctx(opts, read_cache_topology(), describe_cpu());
  if (opts.clock_ghz > 0) {
    ctx.cpu.clock_ghz = opts.clock_ghz;
    ctx.cpu.clock_source = "--clock-ghz";
  }
  ctx.threads = opts.threads > 0 ? opts.threads : ctx.cpu.logical_cpus;
  if (opts.threads > 4096) throw gpulab::UsageError("--threads must be at most 4096");
  if (!opts.plot_dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(opts.plot_dir, ec);
    if (!std::filesystem::is_directory(opts.plot_dir))
      throw gpulab::UsageError(
          fmt::format("--plot {}: cannot create that directory", opts.plot_dir));
  }
  const bool spec_only = opts.spec || opts.peak_tflops || opts.decode;
  if (!spec_only && opts.cpu >= 0) pin_current_thread(opts.cpu);

  if (!spec_only) {
    std::string caches;
    for (const auto& l : ctx.topo.data_levels)
      caches += fmt::format("{}L{} {}", caches.empty() ? "" : ", ", l.level, format_size(l.size));
    ctx.say("membench: {} | {} CPUs, {} threads{} | {}, {:.2f} GHz ({})", ctx.cpu.model,
            ctx.cpu.logical_cpus, ctx.threads,
            opts.cpu >= 0 ? fmt::format(" pinned from CPU {}", opts.cpu) : "", ctx.cpu.isa,
            ctx.cpu.clock_ghz, ctx.cpu.clock_source);
    ctx.say("caches (sysfs): {}",
            caches.empty() ? "unknown: " + ctx.topo.source : caches + " (64-byte lines)");
    Json levels = Json::array();
    for (const auto& l : ctx.topo.data_levels)
      levels.push_back({{"level", l.level},
                        {"bytes", l.size},
                        {"line", l.line},
                        {"shared_cpu_list", l.shared_with}});
    ctx.doc["machine"] = {{"cpu", ctx.cpu.model},           {"logical_cpus", ctx.cpu.logical_cpus},
                          {"threads", ctx.threads},         {"isa", ctx.cpu.isa},
                          {"clock_ghz", ctx.cpu.clock_ghz}, {"caches", levels}};
  }

  const std::string& p = opts.part;
  if (spec_only) {
    run_spec(ctx);
  } else {
    if (p == "all" || p == "latency") run_latency(ctx);
    if (p == "all" || p == "bandwidth") run_bandwidth(ctx);
    if (p == "all" || p == "peak") run_peak(ctx);
    if (p == "all" || p == "roofline") run_placement(ctx);
    if (p == "all" || p == "roofline") run_spec(ctx);
    if (p == "all" || p == "stride") run_stride(ctx);
  }
  for (const auto& line : ctx.plots) ctx.say("plot: {}", line);
  for (const auto& f : ctx.failures) ctx.say("FAIL: {}", f);
  ctx.doc["failures"] = ctx.failures;
  if (ctx.busy_fraction) ctx.doc["busy_fraction"] = *ctx.busy_fraction;
  if (opts.json)
    gpulab::print_json(ctx.doc);
  else
    fmt::print("{}", ctx.text);
  std::fflush(stdout);
  for (const auto& w : ctx.warnings) fmt::print(stderr, "{}\n", w);
  for (const auto& e : ctx.write_errors) gpulab::print_error("membench", e);
  return ctx.failures.empty() && ctx.write_errors.empty() ? gpulab::kExitOk : gpulab::kExitCheckFailed;
}

}  // namespace membench
