#include "cluster_sim/simulator.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <limits>
#include <set>
#include <unordered_map>

#include "cluster_sim/backfill.hpp"
#include "gpulab/cli.hpp"
#include "gpulab/stats.hpp"

namespace cluster_sim {
namespace {

constexpr double kNever = std::numeric_limits<double>::infinity();

// Queue order: higher priority first, then trace order (seq). A preempted job
// keeps its seq, so it goes back ahead of everything that arrived after it.
struct QueueKey {
  int neg_priority;
  std::size_t seq;
  auto operator<=>(const QueueKey&) const = default;
};

struct RunState {
  Placement placement;
  double started = 0;
  double remaining = 0;  // work left, in ideal-placement time units
  double factor = 1;     // topology slowdown of the current placement
  double queued_since = 0;
  bool running = false;
  Placement held;        // naive grabbing only: GPUs held before the job can start
};

class Simulation {
 public:
  Simulation(const std::vector<Job>& jobs, const SimConfig& cfg)
      : jobs_(jobs),
        cfg_(cfg),
        cluster_(cfg.nodes, cfg.gpus_per_node, cfg.island_size, cfg.cpus_per_node),
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
    const std::size_t t = tenant_names_.size();
    tenant_queue_.resize(t);
    tenant_gpus_.assign(t, 0);
    tenant_cpus_.assign(t, 0);
    tenant_share_time_.assign(t, 0);
    node_jobs_.resize(static_cast<std::size_t>(cfg.nodes));
  }

  SimResult run() {
    std::size_t next = 0;
    double now = 0;
    for (;;) {
      double t = running_.empty() ? kNever : running_.begin()->first;
      if (next < order_.size()) t = std::min(t, jobs_[order_[next]].arrival);
      if (t == kNever) break;
      account_shares(now, t);
      now = t;
      // Completions release first, so GPUs freed at t are usable by jobs arriving at t.
      while (!running_.empty() && running_.begin()->first <= now) finish(running_.begin()->second, now);
      while (next < order_.size() && jobs_[order_[next]].arrival <= now) enqueue(order_[next++], now);
      schedule(now);
      ++result_.events;
      result_.stranded_peak = std::max(result_.stranded_peak, stranded());
      last_event_ = now;
    }
    return finish_result();
  }

 private:
  void validate() const {
    for (const Job& j : jobs_) {
      const std::string where = j.line > 0 ? fmt::format("trace line {}: ", j.line) : std::string{};
      if (j.gpus > cluster_.total_gpus())
        throw gpulab::UsageError(fmt::format("{}job {} needs {} GPUs but the cluster has {}", where,
                                             j.id, j.gpus, cluster_.total_gpus()));
      const int per_node = std::min(j.gpus, cfg_.gpus_per_node);
      if (cfg_.cpus_per_node > 0 && (j.cpus * per_node + j.gpus - 1) / j.gpus > cfg_.cpus_per_node)
        throw gpulab::UsageError(fmt::format("{}job {} needs {} CPUs on one node but nodes have {}",
                                             where, j.id, j.cpus, cfg_.cpus_per_node));
    }
  }

  [[nodiscard]] int cpus_of(std::size_t j) const { return cfg_.cpus_per_node > 0 ? jobs_[j].cpus : 0; }
  [[nodiscard]] QueueKey key_of(std::size_t j) const { return {-jobs_[j].priority, seq_[j]}; }
  [[nodiscard]] std::size_t tenant_of(std::size_t j) const { return tenant_index_.at(jobs_[j].tenant); }

  // The GPUs on one node that a pending job could use: its size, or for a gang
  // its remainder (whole nodes otherwise).
  [[nodiscard]] int need_on_one_node(std::size_t j) const {
    const int g = cfg_.gpus_per_node;
    if (jobs_[j].gpus <= g) return jobs_[j].gpus;
    return jobs_[j].gpus % g != 0 ? jobs_[j].gpus % g : g;
  }

  void enqueue(std::size_t j, double now) {
    state_[j].queued_since = now;
    if (state_[j].remaining == 0) state_[j].remaining = jobs_[j].duration;
    if (!cfg_.gang && jobs_[j].gpus > cfg_.gpus_per_node) {
      grabbers_.push_back(j);  // naive: grabs node by node in the pass
      return;
    }
    queue_.insert({key_of(j), j});
    tenant_queue_[tenant_of(j)].insert({key_of(j), j});
    needs_.insert(need_on_one_node(j));
  }

  void dequeue(std::size_t j) {
    queue_.erase({key_of(j), j});
    tenant_queue_[tenant_of(j)].erase({key_of(j), j});
    needs_.erase(needs_.find(need_on_one_node(j)));
  }

  [[nodiscard]] double dominant_share(std::size_t t) const {
    double s = static_cast<double>(tenant_gpus_[t]) / cluster_.total_gpus();
    if (cfg_.cpus_per_node > 0) {
      s = std::max(s, static_cast<double>(tenant_cpus_[t]) /
                          (static_cast<double>(cfg_.cpus_per_node) * cfg_.nodes));
    }
    return s;
  }

  // FIFO (by priority): the oldest job. DRF: the oldest job of the tenant with
  // the smallest dominant share (GPU or CPU, whichever it uses more of).
  [[nodiscard]] std::optional<std::size_t> head() const {
    if (queue_.empty()) return std::nullopt;
    if (cfg_.order == QueueOrder::kFifo) return queue_.begin()->second;
    std::optional<std::size_t> best;
    double best_share = 0;
    for (std::size_t t = 0; t < tenant_queue_.size(); ++t) {
      if (tenant_queue_[t].empty()) continue;
      const double s = dominant_share(t);
      const auto& cand = *tenant_queue_[t].begin();
      if (!best || s < best_share || (s == best_share && cand.first < key_of(*best))) {
        best = cand.second;
        best_share = s;
      }
    }
    return best;
  }

  void account_shares(double from, double to) {
    if (to <= from) return;
    int contending = 0;
    for (const auto& q : tenant_queue_) contending += q.empty() ? 0 : 1;
    if (contending < 2) return;
    contended_time_ += to - from;
    for (std::size_t t = 0; t < tenant_names_.size(); ++t) tenant_share_time_[t] += dominant_share(t) * (to - from);
  }

  void start(std::size_t j, Placement p, double now) {
    RunState& s = state_[j];
    JobOutcome& o = result_.jobs[j];
    for (const Slice& sl : p) {
      cluster_.take(sl);
      node_jobs_[static_cast<std::size_t>(sl.node)].push_back(j);
    }
    s.factor = 1;
    if (cfg_.island_size > 0) {
      const Span sp = span_of(cluster_, p);
      if (sp.nodes > 1) {
        s.factor = cfg_.node_penalty;
        o.spanned_nodes = true;
      } else if (sp.islands > 1) {
        s.factor = cfg_.island_penalty;
        o.spanned_islands = true;
      }
    }
    s.placement = std::move(p);
    s.started = now;
    s.running = true;
    if (o.first_start < 0) o.first_start = now;
    o.wait += now - s.queued_since;
    const std::size_t t = tenant_of(j);
    tenant_gpus_[t] += jobs_[j].gpus;
    tenant_cpus_[t] += cpus_of(j);
    running_.insert({now + s.remaining * s.factor, j});
  }

  // Stops a running job: returns its GPUs and books the time it held them.
  void stop(std::size_t j, double now) {
    RunState& s = state_[j];
    running_.erase({s.started + s.remaining * s.factor, j});
    for (const Slice& sl : s.placement) {
      cluster_.give(sl);
      auto& v = node_jobs_[static_cast<std::size_t>(sl.node)];
      v.erase(std::find(v.begin(), v.end(), j));
    }
    const double held = now - s.started;
    result_.jobs[j].run_time += held;
    result_.busy_gpu_time += held * jobs_[j].gpus;
    const std::size_t t = tenant_of(j);
    tenant_gpus_[t] -= jobs_[j].gpus;
    tenant_cpus_[t] -= cpus_of(j);
    s.remaining -= held / s.factor;
    s.running = false;
    s.placement.clear();
  }

  void finish(std::size_t j, double now) {
    stop(j, now);
    result_.jobs[j].end = now;
    ++result_.completed;
    last_completion_ = now;
  }

  void schedule(double now) {
    while (const auto h = head()) {
      if (auto p = place(cluster_, cfg_.policy, jobs_[*h].gpus, cpus_of(*h))) {
        dequeue(*h);
        start(*h, std::move(*p), now);
        continue;
      }
      if (cfg_.preempt && preempt_for(*h, now)) {
        // Start h on the room it made at once: re-asking the queue here would let
        // another tenant's job (DRF) take the freed GPUs and evict forever.
        if (auto p = place(cluster_, cfg_.policy, jobs_[*h].gpus, cpus_of(*h))) {
          dequeue(*h);
          start(*h, std::move(*p), now);
          continue;
        }
        break;
      }
      if (cfg_.backfill) backfill_behind(*h, now);
      break;  // strict order: nothing else jumps a blocked head
    }
    grab_rounds(now);
  }

  // Extension 1: make room for `h` by evicting strictly lower-priority jobs
  // from the one node where that evicts the fewest GPUs. Victims restart from
  // their last checkpoint: remaining work + the checkpoint penalty.
  bool preempt_for(std::size_t h, double now) {
    if (jobs_[h].gpus > cfg_.gpus_per_node) return false;  // gangs wait; they never evict
    int best_node = -1;
    int best_cost = std::numeric_limits<int>::max();
    std::vector<std::size_t> best_victims;
    for (int n = 0; n < cfg_.nodes; ++n) {
      std::vector<std::size_t> cand;
      for (std::size_t v : node_jobs_[static_cast<std::size_t>(n)]) {
        if (jobs_[v].priority < jobs_[h].priority) cand.push_back(v);
      }
      if (cand.empty()) continue;
      std::sort(cand.begin(), cand.end(), [&](std::size_t a, std::size_t b) {
        if (jobs_[a].priority != jobs_[b].priority) return jobs_[a].priority < jobs_[b].priority;
        return state_[a].started > state_[b].started;  // least progress lost first
      });
      int free_g = cluster_.free_gpus(n);
      int free_c = cluster_.free_cpus(n);
      int cost = 0;
      std::vector<std::size_t> victims;
      for (std::size_t v : cand) {
        if (free_g >= jobs_[h].gpus && free_c >= cpus_of(h)) break;
        for (const Slice& sl : state_[v].placement) {
          if (sl.node == n) {
            free_g += popcount(sl.mask);
            free_c += sl.cpus;
          }
        }
        cost += jobs_[v].gpus;
        victims.push_back(v);
      }
      if (free_g >= jobs_[h].gpus && free_c >= cpus_of(h) && cost < best_cost) {
        best_node = n;
        best_cost = cost;
        best_victims = std::move(victims);
      }
    }
    if (best_node < 0) return false;
    for (std::size_t v : best_victims) {
      stop(v, now);
      state_[v].remaining += cfg_.checkpoint_penalty;
      result_.lost_gpu_time += cfg_.checkpoint_penalty * jobs_[v].gpus;
      ++result_.jobs[v].preemptions;
      ++result_.preemptions;
      enqueue(v, now);
    }
    return true;
  }

  // Extension 4, EASY backfill: the blocked head gets a reservation at the
  // earliest time running jobs free enough GPUs; a job behind it may start now
  // if it keeps off the reserved nodes or ends before the reservation.
  void backfill_behind(std::size_t h, double now) {
    const Reservation r = reserve(cluster_, jobs_[h].gpus, cpus_of(h), running_,
                                  [&](std::size_t j) -> const Placement& { return state_[j].placement; });
    if (!r.found) return;
    int examined = 0;
    for (auto it = queue_.begin(); it != queue_.end() && examined < cfg_.backfill_depth;) {
      const std::size_t j = it->second;
      ++it;  // start() below removes j from the queue
      if (j == h) continue;
      ++examined;
      auto p = place(cluster_, cfg_.policy, jobs_[j].gpus, cpus_of(j), r.nodes);
      if (!p) {
        p = place(cluster_, cfg_.policy, jobs_[j].gpus, cpus_of(j));
        if (!p) continue;
        double factor = 1;
        if (cfg_.island_size > 0) {
          const Span sp = span_of(cluster_, *p);
          factor = sp.nodes > 1 ? cfg_.node_penalty : sp.islands > 1 ? cfg_.island_penalty : 1;
        }
        if (now + state_[j].remaining * factor > r.time) continue;  // would delay the head
      }
      dequeue(j);
      start(j, std::move(*p), now);
    }
  }

  // Naive gangs: round-robin, each takes what one node has free, until a round
  // makes no progress. Held GPUs are never given back.
  void grab_rounds(double now) {
    bool progress = true;
    while (progress) {
      progress = false;
      for (auto it = grabbers_.begin(); it != grabbers_.end();) {
        const std::size_t j = *it;
        RunState& s = state_[j];
        int held = 0;
        for (const Slice& sl : s.held) held += popcount(sl.mask);
        if (auto sl = grab_from_next_node(cluster_, grab_cursor_, jobs_[j].gpus - held)) {
          cluster_.take(*sl);
          s.held.push_back(*sl);
          held += popcount(sl->mask);
          progress = true;
        }
        if (held == jobs_[j].gpus) {
          Placement p = std::move(s.held);
          s.held.clear();
          for (const Slice& sl : p) cluster_.give(sl);  // start() takes them again
          start(j, std::move(p), now);
          it = grabbers_.erase(it);
        } else {
          ++it;
        }
      }
    }
  }

  [[nodiscard]] int stranded() const {
    if (needs_.empty()) return 0;
    return cluster_.free_on_nodes_below(*needs_.begin());
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
    r.util_pct = r.makespan > 0 ? 100.0 * r.busy_gpu_time / (cluster_.total_gpus() * r.makespan) : 0;
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
  Cluster cluster_;
  std::vector<RunState> state_;
  std::vector<std::size_t> seq_;
  std::vector<std::size_t> order_;
  SimResult result_;
  std::set<std::pair<QueueKey, std::size_t>> queue_;
  std::vector<std::set<std::pair<QueueKey, std::size_t>>> tenant_queue_;
  std::multiset<int> needs_;
  std::set<std::pair<double, std::size_t>> running_;  // (end time, job): the completion events
  std::vector<std::vector<std::size_t>> node_jobs_;
  std::vector<std::size_t> grabbers_;
  int grab_cursor_ = 0;
  std::unordered_map<std::string, std::size_t> tenant_index_;
  std::vector<std::string> tenant_names_;
  std::vector<int> tenant_gpus_, tenant_cpus_;
  std::vector<double> tenant_share_time_;
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
