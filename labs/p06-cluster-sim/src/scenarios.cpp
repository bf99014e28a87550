#include "cluster_sim/scenarios.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <sstream>
#include <map>
#include <tuple>

#include "cluster_sim/trace.hpp"
#include "gpulab/errors.hpp"
#include "gpulab/stats.hpp"
#include "gpulab/table.hpp"

namespace cluster_sim {
namespace {

using gpulab::Json;
using gpulab::Table;
constexpr auto kL = Table::Align::kLeft;
constexpr auto kR = Table::Align::kRight;

std::string f1(double v) { return fmt::format("{:.1f}", v); }

std::string verdicts(const std::vector<Check>& checks) {
  std::string out;
  for (const Check& c : checks) out += fmt::format("  {} {}\n", c.pass ? "PASS" : "FAIL", c.text);
  return out;
}

Json checks_json(const std::vector<Check>& checks) {
  Json a = Json::array();
  for (const Check& c : checks) a.push_back({{"pass", c.pass}, {"check", c.text}});
  return a;
}

Json result_json(const SimResult& r) {
  return {{"util_pct", r.util_pct},       {"p50_wait", r.p50_wait},
          {"p99_wait", r.p99_wait},       {"stranded_peak", r.stranded_peak},
          {"completed", r.completed},     {"deadlocked", r.deadlocked},
          {"makespan", r.makespan},       {"busy_gpu_time", r.busy_gpu_time},
          {"preemptions", r.preemptions}, {"lost_gpu_time", r.lost_gpu_time}};
}

// Mean and max wait over the jobs selected by `pick`.
template <class Pick>
std::pair<double, double> waits(const std::vector<Job>& jobs, const SimResult& r, Pick pick) {
  double sum = 0, max = 0;
  int n = 0;
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    if (!pick(jobs[i])) continue;
    sum += r.jobs[i].wait;
    max = std::max(max, r.jobs[i].wait);
    ++n;
  }
  return {n > 0 ? sum / n : 0, max};
}

}  // namespace

std::vector<Job> scenario_trace(std::string_view name) {
  std::istringstream in{std::string(embedded_trace(name))};
  return parse_trace(in, fmt::format("traces/{}.csv", name));
}

bool Report::passed() const {
  return std::all_of(checks.begin(), checks.end(), [](const Check& c) { return c.pass; });
}

Report policy_comparison(const std::vector<Job>& jobs) {
  Report rep;
  // Widths chosen so the columns line up under the curriculum's header.
  Table t;
  t.column("policy", kL, 14).column("util%", kR, 7).column("p50_wait", kR, 8).column("p99_wait", kR, 8)
      .column("stranded", kR, 8).column("deadlocks", kR, 9);
  rep.json = {{"cluster", {{"nodes", 4}, {"gpus_per_node", 8}}}, {"policies", Json::array()}};
  std::vector<SimResult> rs;
  for (Policy p : {Policy::kSpread, Policy::kFirstFit, Policy::kBestFit}) {
    SimConfig cfg;
    cfg.nodes = 4;
    cfg.gpus_per_node = 8;
    cfg.policy = p;
    const SimResult r = simulate(jobs, cfg);
    t.row({std::string(policy_name(p)), f1(r.util_pct), f1(r.p50_wait), f1(r.p99_wait),
           std::to_string(r.stranded_peak), std::to_string(r.deadlocked)});
    Json row = result_json(r);
    row["policy"] = policy_name(p);
    rep.json["policies"].push_back(row);
    rs.push_back(r);
  }
  rep.checks.push_back({rs[2].stranded_peak < rs[0].stranded_peak,
                        fmt::format("best_fit strands fewer GPUs than spread ({} < {})",
                                    rs[2].stranded_peak, rs[0].stranded_peak)});
  rep.text = "== Placement-policy comparison (mixed trace + whole-node jobs) ==\n" + t.render();
  rep.json["checks"] = checks_json(rep.checks);
  return rep;
}

Report gang_comparison(const std::vector<Job>& jobs) {
  Report rep;
  SimConfig cfg;
  cfg.nodes = 3;
  cfg.gpus_per_node = 4;
  cfg.policy = Policy::kBestFit;
  cfg.gang = false;
  const SimResult naive = simulate(jobs, cfg);
  cfg.gang = true;
  const SimResult gang = simulate(jobs, cfg);
  const auto n = jobs.size();
  rep.text = "== Gang vs naive: the partial-allocation deadlock ==\n";
  rep.text += fmt::format("  naive_no_gang : {}/{} jobs completed, {} deadlocked{}\n", naive.completed, n,
                          naive.deadlocked,
                          naive.deadlocked > 0 ? " (held GPUs, never able to finish)" : "");
  rep.text += fmt::format("  best_fit_gang : {}/{} jobs completed, {} deadlocked\n", gang.completed, n,
                          gang.deadlocked);
  rep.json = {{"cluster", {{"nodes", 3}, {"gpus_per_node", 4}}},
              {"naive_no_gang", result_json(naive)},
              {"best_fit_gang", result_json(gang)}};
  return rep;
}

Report preemption_comparison(const std::vector<Job>& jobs, double checkpoint_penalty) {
  Report rep;
  Table t;
  t.column("mode", kL).column("hi_mean_wait").column("hi_max_wait").column("lo_mean_wait")
      .column("preemptions").column("lost_gpu_time").column("makespan").column("util%");
  rep.json = {{"cluster", {{"nodes", 2}, {"gpus_per_node", 8}}},
              {"checkpoint_penalty", checkpoint_penalty},
              {"modes", Json::array()}};
  int top = 0;
  for (const Job& j : jobs) top = std::max(top, j.priority);
  auto high = [top](const Job& j) { return j.priority == top; };
  auto low = [top](const Job& j) { return j.priority < top; };
  std::vector<std::pair<double, double>> hi;
  for (bool preempt : {false, true}) {
    SimConfig cfg;
    cfg.nodes = 2;
    cfg.gpus_per_node = 8;
    cfg.preempt = preempt;
    cfg.checkpoint_penalty = checkpoint_penalty;
    const SimResult r = simulate(jobs, cfg);
    const auto h = waits(jobs, r, high);
    const auto l = waits(jobs, r, low);
    hi.push_back(h);
    const char* name = preempt ? "preemption" : "no_preemption";
    t.row({name, f1(h.first), f1(h.second), f1(l.first), std::to_string(r.preemptions),
           f1(r.lost_gpu_time), f1(r.makespan), f1(r.util_pct)});
    Json row = result_json(r);
    row["mode"] = name;
    row["hi_mean_wait"] = h.first;
    row["hi_max_wait"] = h.second;
    row["lo_mean_wait"] = l.first;
    rep.json["modes"].push_back(row);
  }
  rep.checks.push_back({hi[1].second < hi[0].second,
                        fmt::format("priority inversion avoided: high-priority max wait {} with "
                                    "preemption < {} without",
                                    f1(hi[1].second), f1(hi[0].second))});
  rep.text = fmt::format("== Extension 1: preemption (checkpoint penalty {} time units) ==\n",
                         f1(checkpoint_penalty)) +
             t.render() + verdicts(rep.checks);
  rep.json["checks"] = checks_json(rep.checks);
  return rep;
}

Report drf_comparison(const std::vector<Job>& jobs) {
  Report rep;
  Table t;
  t.column("queue", kL).column("tenant", kL).column("jobs").column("mean_wait").column("max_wait")
      .column("gpu_time").column("dominant_share%");
  rep.json = {{"cluster", {{"nodes", 2}, {"gpus_per_node", 8}, {"cpus_per_node", 64}}},
              {"queues", Json::array()}};
  std::vector<double> spread;  // max - min contended dominant share, per queue order
  std::vector<double> worst_wait;
  for (QueueOrder q : {QueueOrder::kFifo, QueueOrder::kDrf}) {
    SimConfig cfg;
    cfg.nodes = 2;
    cfg.gpus_per_node = 8;
    cfg.cpus_per_node = 64;
    cfg.order = q;
    const SimResult r = simulate(jobs, cfg);
    const char* name = q == QueueOrder::kFifo ? "fifo" : "drf";
    Json tenants = Json::object();
    double lo = 1, hi = 0, worst = 0;
    for (const auto& [tenant, s] : r.tenants) {
      t.row({name, tenant, std::to_string(s.jobs), f1(s.mean_wait), f1(s.max_wait), f1(s.gpu_time),
             f1(100 * s.contended_share)});
      tenants[tenant] = {{"jobs", s.jobs},         {"mean_wait", s.mean_wait},
                         {"max_wait", s.max_wait}, {"gpu_time", s.gpu_time},
                         {"dominant_share", s.contended_share}};
      lo = std::min(lo, s.contended_share);
      hi = std::max(hi, s.contended_share);
      worst = std::max(worst, s.mean_wait);
    }
    spread.push_back(hi - lo);
    worst_wait.push_back(worst);
    rep.json["queues"].push_back({{"queue", name}, {"tenants", tenants}, {"result", result_json(r)}});
  }
  rep.checks.push_back({spread[1] < spread[0],
                        fmt::format("DRF evens out dominant shares under contention (gap {}% < {}% with FIFO)",
                                    f1(100 * spread[1]), f1(100 * spread[0]))});
  rep.checks.push_back({worst_wait[1] < worst_wait[0],
                        fmt::format("no tenant is starved: worst tenant mean wait {} with DRF < {} with FIFO",
                                    f1(worst_wait[1]), f1(worst_wait[0]))});
  rep.text = "== Extension 2: DRF across tenants (GPUs and CPUs) ==\n" + t.render() + verdicts(rep.checks);
  rep.json["checks"] = checks_json(rep.checks);
  return rep;
}

Report topology_comparison(const std::vector<Job>& jobs, double island_penalty, double node_penalty) {
  Report rep;
  Table t;
  t.column("policy", kL).column("makespan").column("jobs/1000t").column("mean_slowdown")
      .column("split_islands").column("split_nodes").column("util%");
  rep.json = {{"cluster", {{"nodes", 2}, {"gpus_per_node", 8}, {"island_size", 4}}},
              {"island_penalty", island_penalty},
              {"node_penalty", node_penalty},
              {"policies", Json::array()}};
  std::vector<double> throughput;
  for (Policy p : {Policy::kFirstFit, Policy::kBestFit, Policy::kTopologyAware}) {
    SimConfig cfg;
    cfg.nodes = 2;
    cfg.gpus_per_node = 8;
    cfg.island_size = 4;
    cfg.island_penalty = island_penalty;
    cfg.node_penalty = node_penalty;
    cfg.policy = p;
    cfg.gang = true;
    const SimResult r = simulate(jobs, cfg);
    double slow = 0;
    int islands = 0, nodes = 0;
    for (std::size_t i = 0; i < jobs.size(); ++i) {
      slow += r.jobs[i].run_time / jobs[i].duration;
      islands += r.jobs[i].spanned_islands ? 1 : 0;
      nodes += r.jobs[i].spanned_nodes ? 1 : 0;
    }
    slow /= static_cast<double>(jobs.size());
    const double tput = 1000.0 * r.completed / r.makespan;
    throughput.push_back(tput);
    t.row({std::string(policy_name(p)), f1(r.makespan), fmt::format("{:.2f}", tput),
           fmt::format("{:.3f}", slow), std::to_string(islands), std::to_string(nodes), f1(r.util_pct)});
    Json row = result_json(r);
    row["policy"] = policy_name(p);
    row["jobs_per_1000t"] = tput;
    row["mean_slowdown"] = slow;
    row["split_islands"] = islands;
    row["split_nodes"] = nodes;
    rep.json["policies"].push_back(row);
  }
  rep.checks.push_back(
      {throughput[2] > std::max(throughput[0], throughput[1]),
       fmt::format("topology_aware pays off in throughput: {:.2f} jobs/1000t > first_fit {:.2f}, "
                   "best_fit {:.2f}",
                   throughput[2], throughput[0], throughput[1])});
  rep.text = fmt::format("== Extension 3: NVLink islands (x{} across islands, x{} across nodes) ==\n",
                         f1(island_penalty), f1(node_penalty)) +
             t.render() + verdicts(rep.checks);
  rep.json["checks"] = checks_json(rep.checks);
  return rep;
}

Report backfill_comparison(const std::vector<Job>& jobs) {
  Report rep;
  Table t;
  t.column("queue", kL).column("util%").column("makespan").column("small_mean_wait")
      .column("big_wait").column("big_start");
  rep.json = {{"cluster", {{"nodes", 2}, {"gpus_per_node", 8}}}, {"queues", Json::array()}};
  int biggest = 0;
  for (const Job& j : jobs) biggest = std::max(biggest, j.gpus);
  auto big = [biggest](const Job& j) { return j.gpus == biggest; };
  auto small = [biggest](const Job& j) { return j.gpus < biggest; };
  std::vector<SimResult> rs;
  std::vector<double> big_wait;
  for (bool backfill : {false, true}) {
    SimConfig cfg;
    cfg.nodes = 2;
    cfg.gpus_per_node = 8;
    cfg.backfill = backfill;
    const SimResult r = simulate(jobs, cfg);
    const auto s = waits(jobs, r, small);
    const auto b = waits(jobs, r, big);
    double big_start = 0;
    for (std::size_t i = 0; i < jobs.size(); ++i) {
      if (big(jobs[i])) big_start = std::max(big_start, r.jobs[i].first_start);
    }
    const char* name = backfill ? "easy_backfill" : "fifo";
    t.row({name, f1(r.util_pct), f1(r.makespan), f1(s.first), f1(b.second), f1(big_start)});
    Json row = result_json(r);
    row["queue"] = name;
    row["small_mean_wait"] = s.first;
    row["big_max_wait"] = b.second;
    row["big_last_start"] = big_start;
    rep.json["queues"].push_back(row);
    rs.push_back(r);
    big_wait.push_back(b.second);
  }
  rep.checks.push_back({rs[1].util_pct > rs[0].util_pct,
                        fmt::format("backfill recovers utilisation ({}% > {}%)", f1(rs[1].util_pct),
                                    f1(rs[0].util_pct))});
  rep.checks.push_back({big_wait[1] <= big_wait[0],
                        fmt::format("the big gang is not starved (waits {} with backfill, {} without)",
                                    f1(big_wait[1]), f1(big_wait[0]))});
  rep.text = "== Extension 4: EASY backfill behind a blocked 16-GPU gang ==\n" + t.render() +
             verdicts(rep.checks);
  rep.json["checks"] = checks_json(rep.checks);
  return rep;
}

Report fragmentation_comparison(const FragmentationConfig& fc) {
  if (fc.reserve_nodes < 1 || fc.reserve_nodes >= fc.nodes)
    throw gpulab::UsageError(fmt::format("--reserve-nodes {} must be 1 .. {} (--nodes {} less one)", fc.reserve_nodes,
                                         fc.nodes - 1, fc.nodes));
  GeneratorConfig g;
  g.jobs = fc.jobs;
  g.nodes = fc.nodes;
  g.gpus_per_node = 8;
  g.load = fc.load;
  g.tenants = 1;
  g.high_priority_fraction = 0;
  g.seed = fc.seed;
  const std::vector<Job> jobs = generate_trace(g);
  const auto is_large = [&](const Job& j) { return j.gpus >= fc.large_gpus; };
  int large_jobs = 0;
  for (const Job& j : jobs) large_jobs += is_large(j) ? 1 : 0;

  Report rep;
  Table t;
  t.column("policy", kL).column("pool", kL).column("large_mean_wait").column("large_p99_wait")
      .column("small_mean_wait").column("stranded").column("util%").column("migrations").column("lost_gpu_time");
  rep.json = {{"cluster", {{"nodes", fc.nodes}, {"gpus_per_node", 8}}}, {"jobs", jobs.size()},
              {"large_jobs", large_jobs}, {"large_gpus", fc.large_gpus}, {"reserve_nodes", fc.reserve_nodes},
              {"checkpoint_penalty", fc.checkpoint_penalty}, {"seed", fc.seed}, {"load", fc.load},
              {"runs", Json::array()}};
  struct Row {
    double large_mean = 0;
    int completed = 0;
  };
  std::map<std::pair<Policy, std::string>, Row> rows;
  for (const Policy policy : {Policy::kSpread, Policy::kBestFit}) {
    for (const auto& [mode, reserve, defrag] :
         {std::tuple{"shared", false, false}, std::tuple{"reserved", true, false}, std::tuple{"defrag", false, true},
          std::tuple{"reserved+defrag", true, true}}) {
      SimConfig cfg;
      cfg.nodes = fc.nodes;
      cfg.gpus_per_node = 8;
      cfg.policy = policy;
      cfg.backfill = true;
      cfg.large_gpus = fc.large_gpus;
      cfg.reserve_nodes = reserve ? fc.reserve_nodes : 0;
      cfg.defrag = defrag;
      cfg.checkpoint_penalty = fc.checkpoint_penalty;
      const SimResult r = simulate(jobs, cfg);
      std::vector<double> large_waits;
      for (std::size_t i = 0; i < jobs.size(); ++i)
        if (is_large(jobs[i])) large_waits.push_back(r.jobs[i].wait);
      const double large_mean = waits(jobs, r, is_large).first;
      const double large_p99 = large_waits.empty() ? 0 : gpulab::percentile(large_waits, 99);
      const double small_mean = waits(jobs, r, [&](const Job& j) { return !is_large(j); }).first;
      rows[{policy, mode}] = Row{large_mean, r.completed};
      t.row({std::string(policy_name(policy)), mode, f1(large_mean), f1(large_p99), f1(small_mean),
             std::to_string(r.stranded_peak), f1(r.util_pct), std::to_string(r.migrations), f1(r.lost_gpu_time)});
      Json j = result_json(r);
      j["policy"] = policy_name(policy);
      j["pool"] = mode;
      j["large_mean_wait"] = large_mean;
      j["large_p99_wait"] = large_p99;
      j["small_mean_wait"] = small_mean;
      j["migrations"] = r.migrations;
      rep.json["runs"].push_back(j);
    }
  }
  const bool all_done = std::all_of(rows.begin(), rows.end(), [&](const auto& kv) {
    return kv.second.completed == static_cast<int>(jobs.size());
  });
  rep.checks.push_back({all_done, fmt::format("every run completes all {} jobs", jobs.size())});
  const auto lm = [&](Policy p, const char* mode) { return rows.at({p, mode}).large_mean; };
  rep.checks.push_back(
      {lm(Policy::kSpread, "reserved") < lm(Policy::kSpread, "shared"),
       fmt::format("under spread the reserved pool cuts large-job waits ({} < {} mean)",
                   f1(lm(Policy::kSpread, "reserved")), f1(lm(Policy::kSpread, "shared")))});
  for (const Policy p : {Policy::kSpread, Policy::kBestFit})
    rep.checks.push_back({lm(p, "defrag") < lm(p, "shared"),
                          fmt::format("under {} defragmentation cuts large-job waits ({} < {} mean)", policy_name(p),
                                      f1(lm(p, "defrag")), f1(lm(p, "shared")))});
  rep.text = fmt::format("== Extension 5: reserved pool ({} of {} nodes) and defragmentation, {} jobs (seed {}, "
                         "{} large: >= {} GPUs) ==\n",
                         fc.reserve_nodes, fc.nodes, jobs.size(), fc.seed, large_jobs, fc.large_gpus) +
             t.render() + verdicts(rep.checks);
  rep.json["checks"] = checks_json(rep.checks);
  return rep;
}

std::string render_run(const SimConfig& cfg, const std::vector<Job>& jobs, const SimResult& r) {
  Table t;
  t.column("metric", kL).column("value").column("unit", kL);
  t.row({"jobs", std::to_string(jobs.size()), ""});
  t.row({"completed", std::to_string(r.completed), "jobs"});
  t.row({"deadlocked", std::to_string(r.deadlocked), "jobs"});
  t.row({"utilisation", f1(r.util_pct), "% of GPU-time"});
  t.row({"p50 wait", f1(r.p50_wait), "time units"});
  t.row({"p99 wait", f1(r.p99_wait), "time units"});
  t.row({"stranded (peak)", std::to_string(r.stranded_peak), "GPUs"});
  t.row({"makespan", f1(r.makespan), "time units"});
  if (cfg.reserve_nodes > 0 || cfg.defrag) {
    std::vector<double> large_waits;
    for (std::size_t i = 0; i < jobs.size(); ++i)
      if (jobs[i].gpus >= cfg.large_gpus) large_waits.push_back(r.jobs[i].wait);
    t.row({"large mean wait", f1(large_waits.empty() ? 0 : gpulab::mean(large_waits)), "time units"});
  }
  if (cfg.defrag) t.row({"migrations", std::to_string(r.migrations), "moves"});
  if (cfg.preempt) t.row({"preemptions", std::to_string(r.preemptions), "evictions"});
  if (cfg.preempt || cfg.defrag) t.row({"lost to checkpoints", f1(r.lost_gpu_time), "GPU-time"});
  return fmt::format("== {} on {} nodes x {} GPUs{}{}{}{}{}{} ==\n", policy_name(cfg.policy), cfg.nodes,
                     cfg.gpus_per_node, cfg.gang ? ", gang" : ", naive gangs",
                     cfg.order == QueueOrder::kDrf ? ", DRF" : "", cfg.preempt ? ", preemption" : "",
                     cfg.backfill ? ", EASY backfill" : "",
                     cfg.reserve_nodes > 0 ? fmt::format(", {} nodes reserved for >= {} GPUs", cfg.reserve_nodes,
                                                         cfg.large_gpus)
                                           : std::string{},
                     cfg.defrag ? ", defrag" : "") +
         t.render();
}

gpulab::Json run_json(const SimConfig& cfg, const std::vector<Job>& jobs, const SimResult& r) {
  Json j = result_json(r);
  j["policy"] = policy_name(cfg.policy);
  j["nodes"] = cfg.nodes;
  j["gpus_per_node"] = cfg.gpus_per_node;
  j["gang"] = cfg.gang;
  j["reserve_nodes"] = cfg.reserve_nodes;
  j["large_gpus"] = cfg.large_gpus;
  j["defrag"] = cfg.defrag;
  j["migrations"] = r.migrations;
  j["jobs"] = jobs.size();
  return j;
}

int emit(const std::vector<Report>& reports, bool json) {
  bool ok = true;
  for (const auto& r : reports) ok = ok && r.passed();
  if (json) {
    gpulab::Json doc = gpulab::Json::array();
    for (const auto& r : reports) doc.push_back(r.json);
    gpulab::print_json(reports.size() == 1 ? reports.front().json : doc);
  } else {
    for (std::size_t i = 0; i < reports.size(); ++i) fmt::print("{}{}", i > 0 ? "\n" : "", reports[i].text);
  }
  return ok ? gpulab::kExitOk : gpulab::kExitCheckFailed;
}

}  // namespace cluster_sim
