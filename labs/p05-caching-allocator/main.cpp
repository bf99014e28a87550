// caching-alloc: the curriculum's two allocator demos, plus the extensions as
// subcommands (replay, metrics, fit, sawtooth).
#include <fmt/format.h>

#include <fstream>
#include <map>
#include <sstream>

#include "caching_alloc/caching_allocator.hpp"
#include "caching_alloc/demos.hpp"
#include "caching_alloc/metrics.hpp"
#include "caching_alloc/trace.hpp"
#include "caching_alloc/workloads.hpp"
#include "gpulab/cli.hpp"
#include "gpulab/json.hpp"
#include "gpulab/plot.hpp"
#include "gpulab/progress.hpp"
#include "gpulab/table.hpp"

namespace {

using namespace caching_alloc;
constexpr std::string_view kProgram = "caching-alloc";

double mib(std::uint64_t bytes) {
  return static_cast<double>(bytes) / static_cast<double>(kMiB);
}

struct Flags {
  gpulab::CommonOptions common;
  std::string trace_path;
  std::string plot_path;
  std::string metrics_out;
  std::uint64_t capacity_mib = 81920;  // an 80 GiB H100
  bool coalesce = false;
  std::string fit = "first";
  std::string cross = "event";
  int steps = 4000;
  std::uint64_t idle_ticks = 3;
};

AllocatorConfig config_of(const Flags& f) {
  AllocatorConfig c;
  c.coalesce = f.coalesce;
  c.fit = f.fit == "best" ? FitPolicy::kBestFit : FitPolicy::kFirstFit;
  c.cross_stream = f.cross == "refuse" ? CrossStreamPolicy::kRefuse : CrossStreamPolicy::kEventEdge;
  return c;
}

void add_allocator_flags(CLI::App& sub, Flags& f) {
  sub.add_option("--metrics-out", f.metrics_out,
                 "Also write the allocator's end state as Prometheus text to FILE (atomically; "
                 "for gpu-exporter --textfile-dir)");
  sub.add_option("--capacity-mib", f.capacity_mib, "Device memory in MiB")
      ->capture_default_str()
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1} << 28));
  sub.add_flag("--coalesce", f.coalesce, "Merge adjacent free blocks in the cache (extension 1)");
  sub.add_option("--fit", f.fit, "Choice inside a size-class bin: first or best")
      ->check(CLI::IsMember({"first", "best"}))
      ->capture_default_str();
  sub.add_option("--cross-stream", f.cross,
                 "A cached block of another stream: 'event' reuses it behind an event edge, "
                 "'refuse' never does (PyTorch)")
      ->check(CLI::IsMember({"event", "refuse"}))
      ->capture_default_str();
}

std::vector<TraceEvent> load_trace(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw gpulab::UsageError(fmt::format("cannot open trace '{}'", path));
  std::stringstream buf;
  buf << in.rdbuf();
  auto parsed = parse_trace(buf.str());
  if (!parsed) throw gpulab::UsageError(fmt::format("{}: {}", path, parsed.error().message));
  return std::move(parsed).value();
}

int run_demos(const Flags& f) {
  const FragmentationResult mixed = demo_fragmentation(false);
  const FragmentationResult grouped = demo_fragmentation(true);
  const ChurnResult churn = demo_churn(5000, 2 * kMiB);
  // The demos are lessons; if the model ever stops teaching them, say so.
  std::vector<std::string> failures;
  if (mixed.free_bytes != grouped.free_bytes)
    failures.push_back("demo 1: the two layouts differ in free memory");
  if (mixed.alloc_16mb_ok || !grouped.alloc_16mb_ok)
    failures.push_back("demo 1: 16 MB alloc outcome is not fails/ok");
  if (churn.raw_frees != 5000 || churn.cached_device_mallocs != 1 ||
      churn.cached_device_frees != 0) {
    failures.push_back("demo 2: the cache did not absorb the churn");
  }
  if (f.common.json) {
    const auto frag = [](const FragmentationResult& r) {
      return gpulab::Json{{"free_bytes", r.free_bytes},
                          {"largest_hole_bytes", r.largest_hole},
                          {"alloc_16mb_ok", r.alloc_16mb_ok}};
    };
    gpulab::print_json(gpulab::Json{
        {"demo1", {{"interleaved", frag(mixed)}, {"grouped", frag(grouped)}}},
        {"demo2",
         {{"iterations", 5000},
          {"bytes", 2 * kMiB},
          {"raw", {{"device_mallocs", churn.raw_mallocs}, {"device_frees", churn.raw_frees}}},
          {"caching",
           {{"device_mallocs", churn.cached_device_mallocs},
            {"bin_hits", churn.cached_bin_hits},
            {"device_frees", churn.cached_device_frees}}}}},
        {"failures", failures}});
  } else {
    const auto row = [](std::string_view label, const FragmentationResult& r) {
      fmt::print("  {:<23}free={} MB  largest hole={:>3} MB  16MB alloc: {}\n", label,
                 r.free_bytes / kMiB, r.largest_hole / kMiB,
                 r.alloc_16mb_ok ? "OK" : "FAILS (fragmented!)");
    };
    fmt::print("== Demo 1: external fragmentation is a shape problem ==\n");
    row("interleaved (mixed)", mixed);
    row("grouped (disciplined)", grouped);
    fmt::print("\n== Demo 2: the caching allocator's reason to exist ==\n");
    fmt::print("  {:<11}: {:>5} mallocs, {:>5} frees (each free = device sync)\n", "raw driver",
               churn.raw_mallocs, churn.raw_frees);
    fmt::print("  {:<11}: {:>5} device mallocs, {:>5} bin hits, {} device frees\n", "caching",
               churn.cached_device_mallocs, churn.cached_bin_hits, churn.cached_device_frees);
    for (const auto& msg : failures) fmt::print("FAIL {}\n", msg);
  }
  return failures.empty() ? gpulab::kExitOk : gpulab::kExitCheckFailed;
}

int run_replay(const Flags& f) {
  const std::vector<TraceEvent> events = load_trace(f.trace_path);
  ReplayResult r;
  {
    gpulab::Progress progress("replay", events.size());  // drawn only when stderr is a terminal
    r = replay_trace(events, f.capacity_mib * kMiB, config_of(f), [&](std::size_t done) {
      if (done % 4096 == 0) progress.update(done);
    });
  }
  const AllocatorStats& s = r.stats;
  if (f.common.json) {
    gpulab::Json steps = gpulab::Json::array();
    for (const ReplayStep& st : r.steps) {
      steps.push_back({{"line", st.event.line},
                       {"op", st.event.op == TraceOp::kAlloc ? "alloc" : "free"},
                       {"id", st.event.id},
                       {"size", st.event.size},
                       {"stream", st.event.stream},
                       {"oom", st.oom},
                       {"bin_hit", st.from_cache},
                       {"cross_stream", st.cross_stream},
                       {"reserved_bytes", st.reserved},
                       {"allocated_bytes", st.allocated},
                       {"cached_bytes", st.cached},
                       {"largest_cached_block_bytes", st.largest_cached},
                       {"device_largest_hole_bytes", st.device_largest_hole}});
    }
    gpulab::print_json(gpulab::Json{{"trace", f.trace_path},
                                    {"steps", steps},
                                    {"device_mallocs", s.device_mallocs},
                                    {"device_frees", s.device_frees},
                                    {"bin_hits", s.bin_hits},
                                    {"splits", s.splits},
                                    {"merges", s.merges},
                                    {"ooms", s.ooms},
                                    {"cross_stream_syncs", s.cross_stream_syncs}});
  } else {
    gpulab::Table t;
    t.column("step")
        .column("line")
        .column("op", gpulab::Table::Align::kLeft)
        .column("id", gpulab::Table::Align::kLeft)
        .column("size B")
        .column("stream")
        .column("reserved MiB")
        .column("allocated MiB")
        .column("cached MiB")
        .column("largest cached MiB")
        .column("note", gpulab::Table::Align::kLeft);
    std::size_t n = 0;
    for (const ReplayStep& st : r.steps) {
      const std::string note = st.oom                           ? "OOM"
                               : st.skipped                     ? "skipped (its alloc failed)"
                               : st.cross_stream                ? "bin hit, cross-stream"
                               : st.from_cache                  ? "bin hit"
                               : st.event.op == TraceOp::kAlloc ? "device malloc"
                                                                : "";
      t.row({fmt::format("{}", ++n), fmt::format("{}", st.event.line),
             st.event.op == TraceOp::kAlloc ? "alloc" : "free", st.event.id,
             fmt::format("{}", st.event.size), fmt::format("{}", st.event.stream),
             fmt::format("{:.2f}", mib(st.reserved)), fmt::format("{:.2f}", mib(st.allocated)),
             fmt::format("{:.2f}", mib(st.cached)), fmt::format("{:.2f}", mib(st.largest_cached)),
             note});
    }
    fmt::print("{}", t.render());
    fmt::print(
        "device mallocs {}, device frees {}, bin hits {}, splits {}, merges {}, OOMs {}, "
        "cross-stream syncs {}\n",
        s.device_mallocs, s.device_frees, s.bin_hits, s.splits, s.merges, s.ooms,
        s.cross_stream_syncs);
  }
  if (!f.plot_path.empty()) {
    gpulab::PlotSpec spec;
    spec.title = fmt::format("Allocator replay of {}", f.trace_path);
    spec.x_label = "step";
    spec.y_label = "MiB";
    const auto series = [&](std::string name, auto field) {
      gpulab::PlotSeries ps;
      ps.name = std::move(name);
      for (std::size_t i = 0; i < r.steps.size(); ++i) {
        ps.x.push_back(static_cast<double>(i + 1));
        ps.y.push_back(mib(field(r.steps[i])));
      }
      spec.series.push_back(std::move(ps));
    };
    series("reserved", [](const ReplayStep& s2) { return s2.reserved; });
    series("allocated", [](const ReplayStep& s2) { return s2.allocated; });
    series("cached", [](const ReplayStep& s2) { return s2.cached; });
    series("largest cached block", [](const ReplayStep& s2) { return s2.largest_cached; });
    gpulab::write_svg_plot(spec, f.plot_path);
  }
  if (!f.metrics_out.empty())
    write_metrics_file(f.metrics_out, s, r.steps.empty() ? 0 : r.steps.back().largest_cached);
  return gpulab::kExitOk;
}

int run_metrics(const Flags& f) {
  Device dev(f.capacity_mib * kMiB);
  CachingAllocator alloc(dev, config_of(f));
  std::map<std::string, std::uint64_t> live;
  for (const TraceEvent& ev : load_trace(f.trace_path)) {
    if (ev.op == TraceOp::kAlloc) {
      if (auto a = alloc.allocate(ev.size, ev.stream)) live[ev.id] = a.value().addr;
    } else if (const auto it = live.find(ev.id); it != live.end()) {
      alloc.free(it->second);
      live.erase(it);
    }
  }
  if (f.common.json) {
    const AllocatorStats& s = alloc.stats();
    gpulab::print_json(gpulab::Json{{"reserved_bytes", s.reserved_bytes},
                                    {"allocated_bytes", s.allocated_bytes},
                                    {"cached_bytes", s.cached_bytes()},
                                    {"largest_cached_block_bytes", alloc.largest_cached_block()},
                                    {"device_largest_hole_bytes", dev.largest_hole()},
                                    {"allocations", s.allocs},
                                    {"bin_hits", s.bin_hits},
                                    {"splits", s.splits},
                                    {"device_mallocs", s.device_mallocs},
                                    {"device_frees", s.device_frees},
                                    {"alloc_retries", s.alloc_retries},
                                    {"ooms", s.ooms},
                                    {"cross_stream_syncs", s.cross_stream_syncs}});
  } else {
    fmt::print("{}", prometheus_text(alloc));
  }
  if (!f.metrics_out.empty())
    write_metrics_file(f.metrics_out, alloc.stats(), alloc.largest_cached_block());
  return gpulab::kExitOk;
}

int run_fit(const Flags& f) {
  struct Row {
    std::string workload;
    FitPolicy fit;
    FitResult r;
  };
  std::vector<Row> rows;
  for (const bool mixed : {false, true}) {
    for (const FitPolicy fit : {FitPolicy::kFirstFit, FitPolicy::kBestFit}) {
      AllocatorConfig cfg = config_of(f);
      cfg.fit = fit;
      rows.push_back({mixed ? "mixed 1-9 MiB" : "uniform 8 MiB", fit,
                      run_fit_workload(cfg, mixed, f.common.seed, f.steps)});
    }
  }
  const auto fit_name = [](FitPolicy p) {
    return p == FitPolicy::kFirstFit ? "first-fit" : "best-fit";
  };
  if (f.common.json) {
    gpulab::Json out = gpulab::Json::array();
    for (const Row& row : rows) {
      out.push_back({{"workload", row.workload},
                     {"fit", fit_name(row.fit)},
                     {"peak_reserved_bytes", row.r.peak_reserved},
                     {"device_mallocs", row.r.device_mallocs},
                     {"ooms", row.r.ooms},
                     {"mean_fragmentation", row.r.mean_fragmentation},
                     {"fits_16mb_fraction", row.r.fits_16mb}});
    }
    gpulab::print_json(gpulab::Json{{"seed", f.common.seed}, {"steps", f.steps}, {"results", out}});
    return gpulab::kExitOk;
  }
  gpulab::Table t;
  t.column("workload", gpulab::Table::Align::kLeft)
      .column("bins", gpulab::Table::Align::kLeft)
      .column("peak reserved MiB")
      .column("device mallocs")
      .column("OOMs")
      .column("mean fragmentation")
      .column("16 MiB fits in cache");
  for (const Row& row : rows) {
    t.row({row.workload, fit_name(row.fit), fmt::format("{:.0f}", mib(row.r.peak_reserved)),
           fmt::format("{}", row.r.device_mallocs), fmt::format("{}", row.r.ooms),
           fmt::format("{:.3f}", row.r.mean_fragmentation),
           fmt::format("{:.1f}%", 100.0 * row.r.fits_16mb)});
  }
  fmt::print(
      "demo-1 shape on a 256 MiB device: {} allocations, long-lived interleaved with short-lived "
      "(seed {}, {})\n",
      f.steps, f.common.seed, f.coalesce ? "coalescing" : "no coalescing");
  fmt::print("{}", t.render());
  fmt::print("fragmentation = 1 - largest cached block / cached bytes, averaged over steps\n");
  return gpulab::kExitOk;
}

int run_sawtooth_cmd(const Flags& f) {
  constexpr int kIterations = 40;
  constexpr int kBurstEvery = 10;
  std::vector<SawtoothResult> rs;
  rs.push_back(run_sawtooth(config_of(f), ReleasePolicy::kNever, 0, kIterations, kBurstEvery));
  rs.push_back(
      run_sawtooth(config_of(f), ReleasePolicy::kIdle, f.idle_ticks, kIterations, kBurstEvery));
  rs.push_back(
      run_sawtooth(config_of(f), ReleasePolicy::kEveryIteration, 0, kIterations, kBurstEvery));
  if (f.common.json) {
    gpulab::Json out = gpulab::Json::array();
    for (const auto& r : rs) {
      out.push_back({{"policy", r.policy},
                     {"peak_reserved_bytes", r.peak_reserved},
                     {"mean_reserved_mib", r.mean_reserved_mib},
                     {"device_mallocs", r.device_mallocs},
                     {"device_frees", r.device_frees},
                     {"reserved_mib_per_iteration", r.reserved_mib}});
    }
    gpulab::print_json(
        gpulab::Json{{"iterations", kIterations}, {"burst_every", kBurstEvery}, {"policies", out}});
  } else {
    fmt::print(
        "{} iterations of 8 x 6 MiB activations; every {}th adds an 8 x 24 MiB evaluation burst "
        "({})\n",
        kIterations, kBurstEvery, f.coalesce ? "coalescing" : "no coalescing");
    gpulab::Table t;
    t.column("release policy", gpulab::Table::Align::kLeft)
        .column("peak reserved MiB")
        .column("mean reserved MiB")
        .column("device mallocs")
        .column("device frees (syncs)");
    for (const auto& r : rs) {
      t.row({r.policy, fmt::format("{:.0f}", mib(r.peak_reserved)),
             fmt::format("{:.1f}", r.mean_reserved_mib), fmt::format("{}", r.device_mallocs),
             fmt::format("{}", r.device_frees)});
    }
    fmt::print("{}", t.render());
  }
  if (!f.plot_path.empty()) {
    gpulab::PlotSpec spec;
    spec.title = "Reserved memory per iteration under three release policies";
    spec.x_label = "iteration";
    spec.y_label = "reserved MiB";
    for (const auto& r : rs) {
      gpulab::PlotSeries ps;
      ps.name = r.policy;
      for (std::size_t i = 0; i < r.reserved_mib.size(); ++i) {
        ps.x.push_back(static_cast<double>(i + 1));
        ps.y.push_back(r.reserved_mib[i]);
      }
      spec.series.push_back(std::move(ps));
    }
    gpulab::write_svg_plot(spec, f.plot_path);
  }
  return gpulab::kExitOk;
}

}  // namespace

int main(int argc, char** argv) {
  Flags f;
  CLI::App app{
      "A PyTorch-style caching GPU allocator over a first-fit driver model.\n"
      "With no subcommand: the curriculum's fragmentation and churn demos."};
  app.fallthrough();
  gpulab::add_json_flag(app, f.common);

  auto* replay = app.add_subcommand(
      "replay", "Replay an op,id,size,stream CSV trace; memory figures per step");
  replay->add_option("trace", f.trace_path, "Trace file (CSV: op,id,size,stream)")->required();
  replay->add_option("--plot", f.plot_path,
                     "Write reserved/allocated/cached/largest block per step as an SVG");
  add_allocator_flags(*replay, f);

  auto* metrics = app.add_subcommand(
      "metrics", "Replay a trace, then print the allocator state as Prometheus text");
  metrics->add_option("trace", f.trace_path, "Trace file (CSV: op,id,size,stream)")->required();
  add_allocator_flags(*metrics, f);

  auto* fit =
      app.add_subcommand("fit", "Best-fit vs first-fit bins on the demo-1 workload (extension 4)");
  gpulab::add_seed_flag(*fit, f.common);
  fit->add_flag("--coalesce", f.coalesce, "Merge adjacent free blocks in the cache (extension 1)");
  fit->add_option("--steps", f.steps, "Allocations in the workload")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000000));

  auto* saw = app.add_subcommand(
      "sawtooth", "Reserved memory under never / idle-N / every-iteration release (extension 2)");
  saw->add_option("--idle", f.idle_ticks,
                  "Iterations a segment must stay free before the idle policy returns it")
      ->capture_default_str()
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1000}));
  saw->add_flag("--coalesce", f.coalesce,
                "Merge adjacent free blocks, so split segments can go back too");
  saw->add_option("--plot", f.plot_path,
                  "Write reserved MiB per iteration for each policy as an SVG");
  app.require_subcommand(0, 1);

  return gpulab::run_program(kProgram, app, argc, argv, [&] {
    if (replay->parsed()) return run_replay(f);
    if (metrics->parsed()) return run_metrics(f);
    if (fit->parsed()) return run_fit(f);
    if (saw->parsed()) return run_sawtooth_cmd(f);
    return run_demos(f);
  });
}
