// What each caching-alloc run computes and how it prints: the demos (the
// default run) and the replay, metrics, fit and sawtooth subcommands, each a
// result struct rendered as the README's text by render() and as one JSON
// document by to_json(). main.cpp only wires flags to these.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "caching_alloc/caching_allocator.hpp"
#include "caching_alloc/demos.hpp"
#include "caching_alloc/trace.hpp"
#include "caching_alloc/workloads.hpp"
#include "gpulab/json.hpp"
#include "gpulab/plot.hpp"

namespace caching_alloc {

// A trace larger than this is refused (so are /dev/zero and a directory).
inline constexpr std::size_t kMaxTraceBytes = std::size_t{256} << 20;
// The trace at `path`, read under kMaxTraceBytes and parsed; throws
// gpulab::UsageError naming the file ("t.csv: line 3: ...").
std::vector<TraceEvent> load_trace_file(const std::string& path);

// ---- the default run: demo 1 (fragmentation) and demo 2 (churn) ----
struct DemosReport {
  FragmentationResult mixed, grouped;
  ChurnResult churn;
  std::vector<std::string> failures;  // lessons the model stopped teaching
  [[nodiscard]] bool pass() const { return failures.empty(); }
};
DemosReport run_demos();
std::string render(const DemosReport& r);
gpulab::Json to_json(const DemosReport& r);

// ---- replay: one row of memory figures per trace step ----
struct ReplayReport {
  std::string trace_path;
  ReplayResult result;
  [[nodiscard]] bool pass() const { return true; }
};
std::string render(const ReplayReport& r);
gpulab::Json to_json(const ReplayReport& r);
// The --plot picture: reserved, allocated, cached and the largest cached block per step.
gpulab::PlotSpec replay_plot(const ReplayReport& r);

// ---- metrics: the allocator's state after a trace ----
struct MetricsReport {
  AllocatorStats stats;
  std::uint64_t largest_cached = 0;
  std::uint64_t device_largest_hole = 0;
  std::string prometheus;  // prometheus_text() of the allocator at the end
  [[nodiscard]] bool pass() const { return true; }
};
MetricsReport run_metrics(const std::vector<TraceEvent>& events, std::uint64_t device_bytes,
                          const AllocatorConfig& config);
std::string render(const MetricsReport& r);  // the Prometheus text
gpulab::Json to_json(const MetricsReport& r);

// ---- fit: first-fit vs best-fit bins on the demo-1 workload ----
struct FitRow {
  std::string workload;
  FitPolicy fit = FitPolicy::kFirstFit;
  FitResult r;
};
struct FitReport {
  std::uint64_t seed = 0;
  int steps = 0;
  bool coalesce = false;
  std::vector<FitRow> rows;
  [[nodiscard]] bool pass() const { return true; }
};
// Both workloads (uniform, mixed) under both fits; config's fit is overridden.
FitReport run_fit(const AllocatorConfig& config, std::uint64_t seed, int steps);
std::string render(const FitReport& r);
gpulab::Json to_json(const FitReport& r);

// ---- sawtooth: reserved memory under three release policies ----
struct SawtoothReport {
  static constexpr int kIterations = 40;
  static constexpr int kBurstEvery = 10;
  bool coalesce = false;
  std::vector<SawtoothResult> policies;  // never, idle-N, every iteration
  [[nodiscard]] bool pass() const { return true; }
};
SawtoothReport run_sawtooth_report(const AllocatorConfig& config, std::uint64_t idle_ticks);
std::string render(const SawtoothReport& r);
gpulab::Json to_json(const SawtoothReport& r);
// The --plot picture: reserved MiB per iteration, one series per policy.
gpulab::PlotSpec sawtooth_plot(const SawtoothReport& r);

}  // namespace caching_alloc
