// caching-alloc: the curriculum's two allocator demos, plus the extensions as
// subcommands (replay, metrics, fit, sawtooth). What each run computes and
// prints is in caching_alloc/reports.hpp.
#include <fmt/format.h>

#include "caching_alloc/metrics_out.hpp"
#include "caching_alloc/reports.hpp"
#include "caching_alloc/trace.hpp"
#include "gpulab/cli.hpp"
#include "gpulab/emit_report.hpp"
#include "gpulab/json.hpp"
#include "gpulab/metrics_out.hpp"
#include "gpulab/plot.hpp"
#include "gpulab/progress.hpp"

namespace {

using namespace caching_alloc;
constexpr std::string_view kProgram = "caching-alloc";

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
  gpulab::add_metrics_out_flag(sub, f.metrics_out, "the allocator's end state");
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


int run_replay(const Flags& f) {
  ReplayReport r{f.trace_path, {}};
  const std::vector<TraceEvent> events = load_trace_file(f.trace_path);
  {
    gpulab::Progress progress("replay", events.size());  // drawn only when stderr is a terminal
    r.result = replay_trace(events, f.capacity_mib * kMiB, config_of(f), [&](std::size_t done) {
      if (done % 4096 == 0) progress.update(done);
    });
  }
  const int rc = gpulab::emit_report(r, f.common.json);
  if (!f.plot_path.empty()) gpulab::write_svg_plot(replay_plot(r), f.plot_path);
  if (!f.metrics_out.empty())
    write_metrics_file(f.metrics_out, r.result.stats,
                       r.result.steps.empty() ? 0 : r.result.steps.back().largest_cached);
  return rc;
}

int run_metrics_cmd(const Flags& f) {
  const MetricsReport r =
      run_metrics(load_trace_file(f.trace_path), f.capacity_mib * kMiB, config_of(f));
  const int rc = gpulab::emit_report(r, f.common.json);
  if (!f.metrics_out.empty()) write_metrics_file(f.metrics_out, r.stats, r.largest_cached);
  return rc;
}

int run_sawtooth_cmd(const Flags& f) {
  const SawtoothReport r = run_sawtooth_report(config_of(f), f.idle_ticks);
  const int rc = gpulab::emit_report(r, f.common.json);
  if (!f.plot_path.empty()) gpulab::write_svg_plot(sawtooth_plot(r), f.plot_path);
  return rc;
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
    if (metrics->parsed()) return run_metrics_cmd(f);
    if (fit->parsed()) return gpulab::emit_report(run_fit(config_of(f), f.common.seed, f.steps), f.common.json);
    if (saw->parsed()) return run_sawtooth_cmd(f);
    return gpulab::emit_report(run_demos(), f.common.json);
  });
}
