#include "cluster_sim/simulator.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <limits>
#include <unordered_map>

#include "cluster_sim/online_scheduler.hpp"
#include "gpulab/errors.hpp"
#include "gpulab/stats.hpp"

namespace cluster_sim {
namespace {

constexpr double kNever = std::numeric_limits<double>::infinity();

// What the simulator books about a job; where it runs and the queue are the
// online scheduler's.
struct RunState {
  double started = 0;
  double remaining = 0;  // work left, in ideal-placement time units
  double factor = 1;     // topology slowdown of the current placement
  double queued_since = 0;
  Placement held;        // naive grabbing only: GPUs held before the job can start
};

SchedulerConfig scheduler_config(const SimConfig& cfg) {
  SchedulerConfig s;
  s.policy = cfg.policy;
  s.order = cfg.order;
  s.preempt = cfg.preempt;
  s.blocking = cfg.backfill ? Blocking::kBackfill : Blocking::kStrict;
  s.backfill_depth = cfg.backfill_depth;
  s.defrag = cfg.defrag;
  s.defrag_min_gpus = cfg.large_gpus;
  return s;
}

// Pool 0: the nodes everyone may use; pool 1 (with a reserve): the last
// reserve_nodes nodes, for large jobs only.
std::vector<Cluster> pools_of(const SimConfig& cfg) {
  if (cfg.reserve_nodes <= 0 || cfg.reserve_nodes >= cfg.nodes)
    return {Cluster(cfg.nodes, cfg.gpus_per_node, cfg.island_size, cfg.cpus_per_node)};
  return {Cluster(cfg.nodes - cfg.reserve_nodes, cfg.gpus_per_node, cfg.island_size, cfg.cpus_per_node),
          Cluster(cfg.reserve_nodes, cfg.gpus_per_node, cfg.island_size, cfg.cpus_per_node)};
}

class Simulation {
 public:
  Simulation(const std::vector<Job>& jobs, const SimConfig& cfg)
      : jobs_(jobs),
        cfg_(cfg),
        sched_((check_pools(cfg), pools_of(cfg)), scheduler_config(cfg),
               SchedulerHooks{
                   [this](JobId j, const PoolPlacement& p) { return on_start(j, p); },
                   [this](JobId j, const PoolPlacement& p) { return now_ + state_[j].remaining * factor_of(p); },
                   [this](JobId v, JobId) { on_preempt(v); },
                   [this](JobId v, JobId) { on_migrate(v); },
                   {}}),  // placement: the configured policy
        state_(jobs.size()),
        seq_(jobs.size()) {
    result_.jobs.resize(jobs.size());
    validate();
    order_.resize(jobs.size());
    for (std::size_t i = 0; i < jobs.size(); ++i) order_[i] = i;
    std::stable_sort(order_.begin(), order_.end(),
                     [&](std::size_t a, std::size_t b) { return jobs_[a].arrival < jobs_[b].arrival; });
    for (std::size_t k = 0; k < order_.size(); ++k) seq_[order_[k]] = k;
    for (const Job& j : jobs_) {
      if (!tenant_index_.contains(j.tenant)) {
        tenant_index_.emplace(j.tenant, tenant_names_.size());
        tenant_names_.push_back(j.tenant);
      }
    }
    tenant_share_time_.assign(tenant_names_.size(), 0);
  }

  SimResult run() {
    std::size_t next = 0;
    for (;;) {
      const auto& running = sched_.running();
      double t = running.empty() ? kNever : running.begin()->first;
      if (next < order_.size()) t = std::min(t, jobs_[order_[next]].arrival);
      if (t == kNever) break;
      account_shares(now_, t);
      now_ = t;
      // Completions release first, so GPUs freed at t are usable by jobs arriving at t.
      while (!running.empty() && running.begin()->first <= now_) finish(running.begin()->second);
      while (next < order_.size() && jobs_[order_[next]].arrival <= now_) enqueue(order_[next++]);
      sched_.schedule(now_);
      grab_rounds();
      ++result_.events;
      result_.stranded_peak = std::max(result_.stranded_peak, sched_.stranded());
      last_event_ = now_;
    }
    return finish_result();
  }

 private:
  [[nodiscard]] const Cluster& cluster() const { return sched_.pool(0); }
  [[nodiscard]] bool reserved() const { return sched_.pools() > 1; }
  [[nodiscard]] bool large(std::size_t j) const { return jobs_[j].gpus >= cfg_.large_gpus; }

  static void check_pools(const SimConfig& cfg) {
    if (cfg.large_gpus < 1) throw gpulab::UsageError("--large-gpus must be >= 1");
    if (cfg.reserve_nodes < 0 || cfg.reserve_nodes >= cfg.nodes)
      throw gpulab::UsageError(fmt::format("--reserve-nodes {} must leave at least one of the {} nodes unreserved",
                                           cfg.reserve_nodes, cfg.nodes));
    if (cfg.reserve_nodes > 0 && !cfg.gang)
      throw gpulab::UsageError("--reserve-nodes needs --gang (naive grabbing knows only one pool)");
  }

  void validate() const {
    const int total = cfg_.nodes * cfg_.gpus_per_node;
    const int general = (cfg_.nodes - (reserved() ? cfg_.reserve_nodes : 0)) * cfg_.gpus_per_node;
    const int reserve = reserved() ? cfg_.reserve_nodes * cfg_.gpus_per_node : 0;
    for (std::size_t i = 0; i < jobs_.size(); ++i) {
      const Job& j = jobs_[i];
      const std::string where = j.line > 0 ? fmt::format("trace line {}: ", j.line) : std::string{};
      if (j.gpus > total)
        throw gpulab::UsageError(fmt::format("{}job {} needs {} GPUs but the cluster has {}", where,
                                             j.id, j.gpus, total));
      const int room = large(i) ? std::max(general, reserve) : general;
      if (j.gpus > room)
        throw gpulab::UsageError(fmt::format("{}job {} needs {} GPUs but with --reserve-nodes {} the largest pool it "
                                             "may use has {}",
                                             where, j.id, j.gpus, cfg_.reserve_nodes, room));
      const int per_node = std::min(j.gpus, cfg_.gpus_per_node);
      if (cfg_.cpus_per_node > 0 && (j.cpus * per_node + j.gpus - 1) / j.gpus > cfg_.cpus_per_node)
        throw gpulab::UsageError(fmt::format("{}job {} needs {} CPUs on one node but nodes have {}",
                                             where, j.id, j.cpus, cfg_.cpus_per_node));
    }
  }

  [[nodiscard]] int cpus_of(std::size_t j) const { return cfg_.cpus_per_node > 0 ? jobs_[j].cpus : 0; }
  [[nodiscard]] std::size_t tenant_of(std::size_t j) const { return tenant_index_.at(jobs_[j].tenant); }

  [[nodiscard]] Request request_of(std::size_t j) const {
    Request r;
    r.gpus = jobs_[j].gpus;
    r.cpus = cpus_of(j);
    r.priority = jobs_[j].priority;
    r.tenant = jobs_[j].tenant;
    r.seq = seq_[j];
    if (reserved()) r.pools = large(j) ? std::vector<int>{0, 1} : std::vector<int>{0};
    return r;
  }

  // Topology slowdown of a placement (extension 3).
  [[nodiscard]] double factor_of(const PoolPlacement& p) const {
    if (cfg_.island_size <= 0) return 1;
    const Span sp = span_of(sched_.pool(p.pool), p.placement);
    return sp.nodes > 1 ? cfg_.node_penalty : sp.islands > 1 ? cfg_.island_penalty : 1;
  }

  void enqueue(std::size_t j) {
    state_[j].queued_since = now_;
    if (state_[j].remaining == 0) state_[j].remaining = jobs_[j].duration;
    if (!cfg_.gang && jobs_[j].gpus > cfg_.gpus_per_node) {
      grabbers_.push_back(j);  // naive: grabs node by node after the pass
      return;
    }
    sched_.submit(j, request_of(j));
  }

  void account_shares(double from, double to) {
    if (to <= from) return;
    if (sched_.contending_tenants() < 2) return;
    contended_time_ += to - from;
    for (std::size_t t = 0; t < tenant_names_.size(); ++t) {
      tenant_share_time_[t] += sched_.dominant_share(tenant_names_[t]) * (to - from);
    }
  }

  // The scheduler started j: book it and say when it ends.
  double on_start(std::size_t j, const PoolPlacement& p) {
    RunState& s = state_[j];
    JobOutcome& o = result_.jobs[j];
    s.factor = factor_of(p);
    if (cfg_.island_size > 0) {
      const Span sp = span_of(sched_.pool(p.pool), p.placement);
      o.spanned_nodes |= sp.nodes > 1;
      o.spanned_islands |= sp.nodes <= 1 && sp.islands > 1;
    }
    s.started = now_;
    if (o.first_start < 0) o.first_start = now_;
    o.wait += now_ - s.queued_since;
    return now_ + s.remaining * s.factor;
  }

  // Books the time a job held its GPUs (the scheduler has taken them back).
  void book_stop(std::size_t j) {
    RunState& s = state_[j];
    const double held = now_ - s.started;
    result_.jobs[j].run_time += held;
    result_.busy_gpu_time += held * jobs_[j].gpus;
    s.remaining -= held / s.factor;
  }

  // Extension 1: a victim restarts from its last checkpoint: remaining work +
  // the checkpoint penalty.
  void on_preempt(std::size_t v) {
    book_stop(v);
    state_[v].remaining += cfg_.checkpoint_penalty;
    result_.lost_gpu_time += cfg_.checkpoint_penalty * jobs_[v].gpus;
    ++result_.jobs[v].preemptions;
    ++result_.preemptions;
    state_[v].queued_since = now_;
    if (state_[v].remaining == 0) state_[v].remaining = jobs_[v].duration;
  }

  // Extension 5: a moved job restarts from its checkpoint on its new node, at
  // once (it is not queued again): remaining work + the checkpoint penalty.
  void on_migrate(std::size_t v) {
    book_stop(v);
    state_[v].remaining += cfg_.checkpoint_penalty;
    result_.lost_gpu_time += cfg_.checkpoint_penalty * jobs_[v].gpus;
    ++result_.migrations;
    state_[v].queued_since = now_;
  }

  void finish(std::size_t j) {
    sched_.finish(j);
    book_stop(j);
    result_.jobs[j].end = now_;
    ++result_.completed;
    last_completion_ = now_;
  }

  // Naive gangs: round-robin, each takes what one node has free, until a round
  // makes no progress. Held GPUs are never given back.
  void grab_rounds() {
    bool progress = true;
    while (progress) {
      progress = false;
      for (auto it = grabbers_.begin(); it != grabbers_.end();) {
        const std::size_t j = *it;
        RunState& s = state_[j];
        int held = 0;
        for (const Slice& sl : s.held) held += popcount(sl.mask);
        if (auto sl = grab_from_next_node(cluster(), grab_cursor_, jobs_[j].gpus - held)) {
          sched_.block(0, *sl);
          s.held.push_back(*sl);
          held += popcount(sl->mask);
          progress = true;
        }
        if (held == jobs_[j].gpus) {
          Placement p = std::move(s.held);
          s.held.clear();
          for (const Slice& sl : p) sched_.unblock(0, sl);  // adopt() takes them again
          sched_.adopt(j, request_of(j), PoolPlacement{0, std::move(p)}, now_);
          it = grabbers_.erase(it);
        } else {
          ++it;
        }
      }
    }
  }

  SimResult finish_result() {
    SimResult& r = result_;
    for (std::size_t j : grabbers_) {
      if (!state_[j].held.empty()) {
        r.jobs[j].deadlocked = true;
        ++r.deadlocked;
      }
    }
    r.makespan = r.completed > 0 ? last_completion_ : last_event_;
    // GPUs held by deadlocked jobs are busy for nothing until the end.
    r.util_pct = r.makespan > 0 ? 100.0 * r.busy_gpu_time / (cfg_.nodes * cfg_.gpus_per_node * r.makespan) : 0;
    std::vector<double> waits;
    for (std::size_t j = 0; j < jobs_.size(); ++j) {
      if (r.jobs[j].end >= 0) waits.push_back(r.jobs[j].wait);
    }
    if (!waits.empty()) {
      r.p50_wait = gpulab::percentile(waits, 50);
      r.p99_wait = gpulab::percentile(waits, 99);
    }
    for (std::size_t t = 0; t < tenant_names_.size(); ++t) {
      TenantStats ts;
      double sum = 0;
      for (std::size_t j = 0; j < jobs_.size(); ++j) {
        if (tenant_of(j) != t) continue;
        ++ts.jobs;
        sum += r.jobs[j].wait;
        ts.max_wait = std::max(ts.max_wait, r.jobs[j].wait);
        ts.gpu_time += r.jobs[j].run_time * jobs_[j].gpus;
      }
      ts.mean_wait = ts.jobs > 0 ? sum / ts.jobs : 0;
      ts.contended_share = contended_time_ > 0 ? tenant_share_time_[t] / contended_time_ : 0;
      r.tenants.emplace(tenant_names_[t], ts);
    }
    return std::move(r);
  }

  const std::vector<Job>& jobs_;
  const SimConfig& cfg_;
  OnlineScheduler sched_;
  std::vector<RunState> state_;
  std::vector<std::size_t> seq_;
  std::vector<std::size_t> order_;
  SimResult result_;
  std::vector<std::size_t> grabbers_;
  int grab_cursor_ = 0;
  std::unordered_map<std::string, std::size_t> tenant_index_;
  std::vector<std::string> tenant_names_;
  std::vector<double> tenant_share_time_;
  double now_ = 0;
  double contended_time_ = 0;
  double last_completion_ = 0;
  double last_event_ = 0;
};

}  // namespace

SimResult simulate(const std::vector<Job>& jobs, const SimConfig& cfg) {
  Simulation sim(jobs, cfg);
  return sim.run();
}

}  // namespace cluster_sim
