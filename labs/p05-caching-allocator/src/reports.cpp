#include "caching_alloc/reports.hpp"

#include <fmt/format.h>

#include <iterator>
#include <string_view>
#include <utility>

#include "caching_alloc/metrics_out.hpp"
#include "caching_alloc/replay.hpp"
#include "gpulab/errors.hpp"
#include "gpulab/file.hpp"
#include "gpulab/table.hpp"

namespace caching_alloc {

namespace {

double mib(std::uint64_t bytes) {
  return static_cast<double>(bytes) / static_cast<double>(kMiB);
}

const char* op_name(TraceOp op) {
  return op == TraceOp::kAlloc ? "alloc" : "free";
}

const char* fit_name(FitPolicy p) {
  return p == FitPolicy::kFirstFit ? "first-fit" : "best-fit";
}

}  // namespace

std::vector<TraceEvent> load_trace_file(const std::string& path) {
  auto text = gpulab::read_text_file(path, kMaxTraceBytes);
  if (!text) throw gpulab::UsageError(text.error().message);
  auto parsed = parse_trace(text.value());
  if (!parsed) throw gpulab::UsageError(fmt::format("{}: {}", path, parsed.error().message));
  // A trace with no events replays nothing and would print an all-zero report that looks
  // like a result: an empty file is almost always the wrong path or a failed export.
  if (parsed.value().empty()) throw gpulab::UsageError(fmt::format("{}: the trace has no events", path));
  return std::move(parsed).value();
}

// ---- demos ----

DemosReport run_demos() {
  DemosReport r;
  r.mixed = demo_fragmentation(false);
  r.grouped = demo_fragmentation(true);
  r.churn = demo_churn(5000, 2 * kMiB);
  // The demos are lessons; if the model ever stops teaching them, say so.
  if (r.mixed.free_bytes != r.grouped.free_bytes)
    r.failures.push_back("demo 1: the two layouts differ in free memory");
  if (r.mixed.alloc_16mb_ok || !r.grouped.alloc_16mb_ok)
    r.failures.push_back("demo 1: 16 MB alloc outcome is not fails/ok");
  if (r.churn.raw_frees != 5000 || r.churn.cached_device_mallocs != 1 ||
      r.churn.cached_device_frees != 0) {
    r.failures.push_back("demo 2: the cache did not absorb the churn");
  }
  return r;
}

std::string render(const DemosReport& r) {
  std::string out;
  auto put = std::back_inserter(out);
  const auto row = [&](std::string_view label, const FragmentationResult& f) {
    fmt::format_to(put, "  {:<23}free={} MB  largest hole={:>3} MB  16MB alloc: {}\n", label,
                   f.free_bytes / kMiB, f.largest_hole / kMiB,
                   f.alloc_16mb_ok ? "OK" : "FAILS (fragmented!)");
  };
  out += "== Demo 1: external fragmentation is a shape problem ==\n";
  row("interleaved (mixed)", r.mixed);
  row("grouped (disciplined)", r.grouped);
  out += "\n== Demo 2: the caching allocator's reason to exist ==\n";
  fmt::format_to(put, "  {:<11}: {:>5} mallocs, {:>5} frees (each free = device sync)\n",
                 "raw driver", r.churn.raw_mallocs, r.churn.raw_frees);
  fmt::format_to(put, "  {:<11}: {:>5} device mallocs, {:>5} bin hits, {} device frees\n",
                 "caching", r.churn.cached_device_mallocs, r.churn.cached_bin_hits,
                 r.churn.cached_device_frees);
  for (const auto& msg : r.failures) fmt::format_to(put, "FAIL {}\n", msg);
  return out;
}

gpulab::Json to_json(const DemosReport& r) {
  const auto frag = [](const FragmentationResult& f) {
    return gpulab::Json{{"free_bytes", f.free_bytes},
                        {"largest_hole_bytes", f.largest_hole},
                        {"alloc_16mb_ok", f.alloc_16mb_ok}};
  };
  return gpulab::Json{
      {"demo1", {{"interleaved", frag(r.mixed)}, {"grouped", frag(r.grouped)}}},
      {"demo2",
       {{"iterations", 5000},
        {"bytes", 2 * kMiB},
        {"raw", {{"device_mallocs", r.churn.raw_mallocs}, {"device_frees", r.churn.raw_frees}}},
        {"caching",
         {{"device_mallocs", r.churn.cached_device_mallocs},
          {"bin_hits", r.churn.cached_bin_hits},
          {"device_frees", r.churn.cached_device_frees}}}}},
      {"failures", r.failures}};
}

// ---- replay ----

std::string render(const ReplayReport& r) {
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
  for (const ReplayStep& st : r.result.steps) {
    const std::string note = st.oom                           ? "OOM"
                             : st.skipped                     ? "skipped (its alloc failed)"
                             : st.cross_stream                ? "bin hit, cross-stream"
                             : st.from_cache                  ? "bin hit"
                             : st.event.op == TraceOp::kAlloc ? "device malloc"
                                                              : "";
    t.row({fmt::format("{}", ++n), fmt::format("{}", st.event.line), op_name(st.event.op),
           st.event.id, fmt::format("{}", st.event.size), fmt::format("{}", st.event.stream),
           fmt::format("{:.2f}", mib(st.reserved)), fmt::format("{:.2f}", mib(st.allocated)),
           fmt::format("{:.2f}", mib(st.cached)), fmt::format("{:.2f}", mib(st.largest_cached)),
           note});
  }
  const AllocatorStats& s = r.result.stats;
  return t.render() +
         fmt::format(
             "device mallocs {}, device frees {}, bin hits {}, splits {}, merges {}, OOMs {}, "
             "cross-stream syncs {}\n",
             s.device_mallocs, s.device_frees, s.bin_hits, s.splits, s.merges, s.ooms,
             s.cross_stream_syncs);
}

gpulab::Json to_json(const ReplayReport& r) {
  gpulab::Json steps = gpulab::Json::array();
  for (const ReplayStep& st : r.result.steps) {
    steps.push_back({{"line", st.event.line},
                     {"op", op_name(st.event.op)},
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
  const AllocatorStats& s = r.result.stats;
  return gpulab::Json{{"trace", r.trace_path},
                      {"steps", steps},
                      {"device_mallocs", s.device_mallocs},
                      {"device_frees", s.device_frees},
                      {"bin_hits", s.bin_hits},
                      {"splits", s.splits},
                      {"merges", s.merges},
                      {"ooms", s.ooms},
                      {"cross_stream_syncs", s.cross_stream_syncs}};
}

gpulab::PlotSpec replay_plot(const ReplayReport& r) {
  gpulab::PlotSpec spec;
  spec.title = fmt::format("Allocator replay of {}", r.trace_path);
  spec.x_label = "step";
  spec.y_label = "MiB";
  const auto series = [&](std::string name, auto field) {
    gpulab::PlotSeries ps;
    ps.name = std::move(name);
    for (std::size_t i = 0; i < r.result.steps.size(); ++i) {
      ps.x.push_back(static_cast<double>(i + 1));
      ps.y.push_back(mib(field(r.result.steps[i])));
    }
    spec.series.push_back(std::move(ps));
  };
  series("reserved", [](const ReplayStep& s) { return s.reserved; });
  series("allocated", [](const ReplayStep& s) { return s.allocated; });
  series("cached", [](const ReplayStep& s) { return s.cached; });
  series("largest cached block", [](const ReplayStep& s) { return s.largest_cached; });
  return spec;
}

// ---- metrics ----

MetricsReport run_metrics(const std::vector<TraceEvent>& events, std::uint64_t device_bytes,
                          const AllocatorConfig& config) {
  Device dev(device_bytes);
  CachingAllocator alloc(dev, config);
  replay_events(alloc, events);
  MetricsReport r;
  r.stats = alloc.stats();
  r.largest_cached = alloc.largest_cached_block();
  r.device_largest_hole = dev.largest_hole();
  r.prometheus = prometheus_text(alloc);
  return r;
}

std::string render(const MetricsReport& r) {
  return r.prometheus;
}

gpulab::Json to_json(const MetricsReport& r) {
  const AllocatorStats& s = r.stats;
  return gpulab::Json{{"reserved_bytes", s.reserved_bytes},
                      {"allocated_bytes", s.allocated_bytes},
                      {"cached_bytes", s.cached_bytes()},
                      {"largest_cached_block_bytes", r.largest_cached},
                      {"device_largest_hole_bytes", r.device_largest_hole},
                      {"allocations", s.allocs},
                      {"bin_hits", s.bin_hits},
                      {"splits", s.splits},
                      {"device_mallocs", s.device_mallocs},
                      {"device_frees", s.device_frees},
                      {"alloc_retries", s.alloc_retries},
                      {"ooms", s.ooms},
                      {"cross_stream_syncs", s.cross_stream_syncs}};
}

// ---- fit ----

FitReport run_fit(const AllocatorConfig& config, std::uint64_t seed, int steps) {
  FitReport r;
  r.seed = seed;
  r.steps = steps;
  r.coalesce = config.coalesce;
  for (const bool mixed : {false, true}) {
    for (const FitPolicy fit : {FitPolicy::kFirstFit, FitPolicy::kBestFit}) {
      AllocatorConfig cfg = config;
      cfg.fit = fit;
      r.rows.push_back({mixed ? "mixed 1-9 MiB" : "uniform 8 MiB", fit,
                        run_fit_workload(cfg, mixed, seed, steps)});
    }
  }
  return r;
}

std::string render(const FitReport& r) {
  gpulab::Table t;
  t.column("workload", gpulab::Table::Align::kLeft)
      .column("bins", gpulab::Table::Align::kLeft)
      .column("peak reserved MiB")
      .column("device mallocs")
      .column("OOMs")
      .column("mean fragmentation")
      .column("16 MiB fits in cache");
  for (const FitRow& row : r.rows) {
    t.row({row.workload, fit_name(row.fit), fmt::format("{:.0f}", mib(row.r.peak_reserved)),
           fmt::format("{}", row.r.device_mallocs), fmt::format("{}", row.r.ooms),
           fmt::format("{:.3f}", row.r.mean_fragmentation),
           fmt::format("{:.1f}%", 100.0 * row.r.fits_16mb)});
  }
  return fmt::format(
             "demo-1 shape on a 256 MiB device: {} allocations, long-lived interleaved with "
             "short-lived (seed {}, {})\n",
             r.steps, r.seed, r.coalesce ? "coalescing" : "no coalescing") +
         t.render() +
         "fragmentation = 1 - largest cached block / cached bytes, averaged over steps\n";
}

gpulab::Json to_json(const FitReport& r) {
  gpulab::Json out = gpulab::Json::array();
  for (const FitRow& row : r.rows) {
    out.push_back({{"workload", row.workload},
                   {"fit", fit_name(row.fit)},
                   {"peak_reserved_bytes", row.r.peak_reserved},
                   {"device_mallocs", row.r.device_mallocs},
                   {"ooms", row.r.ooms},
                   {"mean_fragmentation", row.r.mean_fragmentation},
                   {"fits_16mb_fraction", row.r.fits_16mb}});
  }
  return gpulab::Json{{"seed", r.seed}, {"steps", r.steps}, {"results", out}};
}

// ---- sawtooth ----

SawtoothReport run_sawtooth_report(const AllocatorConfig& config, std::uint64_t idle_ticks) {
  constexpr int kIt = SawtoothReport::kIterations;
  constexpr int kBurst = SawtoothReport::kBurstEvery;
  SawtoothReport r;
  r.coalesce = config.coalesce;
  r.policies.push_back(run_sawtooth(config, ReleasePolicy::kNever, 0, kIt, kBurst));
  r.policies.push_back(run_sawtooth(config, ReleasePolicy::kIdle, idle_ticks, kIt, kBurst));
  r.policies.push_back(run_sawtooth(config, ReleasePolicy::kEveryIteration, 0, kIt, kBurst));
  return r;
}

std::string render(const SawtoothReport& r) {
  gpulab::Table t;
  t.column("release policy", gpulab::Table::Align::kLeft)
      .column("peak reserved MiB")
      .column("mean reserved MiB")
      .column("device mallocs")
      .column("device frees (syncs)");
  for (const auto& p : r.policies) {
    t.row({p.policy, fmt::format("{:.0f}", mib(p.peak_reserved)),
           fmt::format("{:.1f}", p.mean_reserved_mib), fmt::format("{}", p.device_mallocs),
           fmt::format("{}", p.device_frees)});
  }
  return fmt::format(
             "{} iterations of 8 x 6 MiB activations; every {}th adds an 8 x 24 MiB evaluation "
             "burst ({})\n",
             SawtoothReport::kIterations, SawtoothReport::kBurstEvery,
             r.coalesce ? "coalescing" : "no coalescing") +
         t.render();
}

gpulab::Json to_json(const SawtoothReport& r) {
  gpulab::Json out = gpulab::Json::array();
  for (const auto& p : r.policies) {
    out.push_back({{"policy", p.policy},
                   {"peak_reserved_bytes", p.peak_reserved},
                   {"mean_reserved_mib", p.mean_reserved_mib},
                   {"device_mallocs", p.device_mallocs},
                   {"device_frees", p.device_frees},
                   {"reserved_mib_per_iteration", p.reserved_mib}});
  }
  return gpulab::Json{{"iterations", SawtoothReport::kIterations},
                      {"burst_every", SawtoothReport::kBurstEvery},
                      {"policies", out}};
}

gpulab::PlotSpec sawtooth_plot(const SawtoothReport& r) {
  gpulab::PlotSpec spec;
  spec.title = "Reserved memory per iteration under three release policies";
  spec.x_label = "iteration";
  spec.y_label = "reserved MiB";
  for (const auto& p : r.policies) {
    gpulab::PlotSeries ps;
    ps.name = p.policy;
    for (std::size_t i = 0; i < p.reserved_mib.size(); ++i) {
      ps.x.push_back(static_cast<double>(i + 1));
      ps.y.push_back(p.reserved_mib[i]);
    }
    spec.series.push_back(std::move(ps));
  }
  return spec;
}

}  // namespace caching_alloc
