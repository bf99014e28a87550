#include "cluster_sim/scale.hpp"

#include <fmt/format.h>

#include "cluster_sim/trace.hpp"
#include "gpulab/progress.hpp"
#include "gpulab/table.hpp"
#include "gpulab/timing.hpp"

namespace cluster_sim {
Report scale_report(const std::vector<int>& node_counts, int jobs_per_node, std::uint64_t seed) {
  gpulab::Table t;
  t.column("nodes").column("GPUs").column("jobs").column("events").column("wall_s").column("cpu_s").column("jobs/s")
      .column("us/job");
  gpulab::Json rows = gpulab::Json::array();
  std::vector<double> per_job;
  gpulab::Progress progress("scale", node_counts.size());
  for (int nodes : node_counts) {
    progress.update(per_job.size());
    GeneratorConfig g;
    g.nodes = nodes;
    g.gpus_per_node = 8;
    g.jobs = static_cast<std::size_t>(nodes) * static_cast<std::size_t>(jobs_per_node);
    g.load = 0.95;
    g.seed = seed;
    const auto jobs = generate_trace(g);
    SimConfig cfg;
    cfg.nodes = nodes;
    cfg.gpus_per_node = 8;
    cfg.policy = Policy::kBestFit;
    gpulab::Stopwatch sw;
    const double cpu0 = gpulab::thread_cpu_seconds();
    const SimResult r = simulate(jobs, cfg);  // single-threaded: its CPU time, not the neighbours'
    const double s = gpulab::thread_cpu_seconds() - cpu0;
    const double wall = sw.seconds();
    const double jps = static_cast<double>(jobs.size()) / s;
    per_job.push_back(s / static_cast<double>(jobs.size()));
    t.row({std::to_string(nodes), std::to_string(nodes * 8), std::to_string(jobs.size()), std::to_string(r.events),
           fmt::format("{:.2f}", wall), fmt::format("{:.2f}", s), fmt::format("{:.0f}", jps),
           fmt::format("{:.2f}", 1e6 * per_job.back())});
    rows.push_back({{"nodes", nodes}, {"jobs", jobs.size()}, {"events", r.events}, {"wall_seconds", wall},
                    {"cpu_seconds", s}, {"jobs_per_second", jps}, {"util_pct", r.util_pct}});
  }
  const double growth = per_job.back() / per_job.front();
  const double nodes_growth = static_cast<double>(node_counts.back()) / node_counts.front();
  // Sub-linear: 100x the nodes must cost far less than 100x per job.
  const bool pass = growth < nodes_growth / 10;
  const std::string verdict =
      fmt::format("  {} placement is sub-linear: cost per job grew {:.2f}x for {:.0f}x the nodes\n",
                  pass ? "PASS" : "FAIL", growth, nodes_growth);
  Report report;
  report.text = fmt::format("== Scale: best_fit, load 0.95, {} jobs per node (jobs/s per CPU-second) ==\n{}{}",
                            jobs_per_node, t.render(), verdict);
  report.json = {{"runs", rows}, {"per_job_cost_growth", growth}, {"pass", pass}};
  report.checks.push_back({pass, verdict});
  return report;
}

}  // namespace cluster_sim
