#include "cluster_sim/online_scheduler.hpp"

#include <algorithm>

#include "cluster_sim/backfill.hpp"

namespace cluster_sim {
namespace {

constexpr double kUnknownEnd = std::numeric_limits<double>::infinity();

}  // namespace

OnlineScheduler::OnlineScheduler(std::vector<Cluster> pools, SchedulerConfig cfg, SchedulerHooks hooks)
    : pools_(std::move(pools)), cfg_(cfg), hooks_(std::move(hooks)) {
  count_pools();
}

// The totals, the per-node job lists and the need counts' size, from pools_.
void OnlineScheduler::count_pools() {
  total_gpus_ = 0;
  total_cpus_ = 0;
  node_jobs_.clear();
  for (const Cluster& c : pools_) {
    total_gpus_ += c.total_gpus();
    total_cpus_ += static_cast<double>(c.cpus_per_node()) * c.nodes();
    node_jobs_.emplace_back(static_cast<std::size_t>(c.nodes()));
    needs_.resize(std::max(needs_.size(), static_cast<std::size_t>(c.gpus_per_node()) + 1));
  }
}

void OnlineScheduler::replace_pools(std::vector<Cluster> pools) {
  for (const auto& [end, id] : running_) jobs_.erase(id);
  running_.clear();
  running_priorities_.clear();
  held_gpus_ = 0;
  std::fill(usage_.begin(), usage_.end(), Usage{});
  // A queued job's need on one node is measured on its first pool: recount
  // when any pool's node width changed.
  bool same_widths = pools.size() == pools_.size();
  for (std::size_t p = 0; same_widths && p < pools.size(); ++p) {
    same_widths = pools[p].gpus_per_node() == pools_[p].gpus_per_node();
  }
  pools_ = std::move(pools);
  count_pools();
  if (!same_widths) {
    std::fill(needs_.begin(), needs_.end(), 0);
    for (const auto& [key, id] : queue_) {
      ++needs_[static_cast<std::size_t>(std::max(0, need_on_one_node(jobs_.at(id).request)))];
    }
  }
}

bool OnlineScheduler::queued(JobId id) const {
  const auto it = jobs_.find(id);
  return it != jobs_.end() && !it->second.running;
}

std::vector<JobId> OnlineScheduler::queued_jobs() const {
  std::vector<JobId> out;
  out.reserve(queue_.size());
  for (const auto& [key, id] : queue_) out.push_back(id);
  return out;
}

const std::vector<int>& OnlineScheduler::pools_of(const Request& r) const {
  return r.pools.empty() ? pool0_ : r.pools;
}

// The GPUs on one node that a pending job could use: its size, or for a gang
// its remainder (whole nodes otherwise). Measured on its first pool.
int OnlineScheduler::need_on_one_node(const Request& r) const {
  const int g = pool(pools_of(r).front()).gpus_per_node();
  if (r.gpus <= g) return r.gpus;
  return r.gpus % g != 0 ? r.gpus % g : g;
}

std::size_t OnlineScheduler::tenant_index(const std::string& name) {
  // Consecutive jobs are mostly one tenant's: skip the hash for a repeat.
  if (!tenant_names_.empty() && tenant_names_[last_tenant_] == name) return last_tenant_;
  const auto [it, added] = tenant_ids_.emplace(name, tenant_names_.size());
  if (added) {
    tenant_names_.push_back(name);
    tenant_queue_.emplace_back();
    tenant_queued_.push_back(0);
    usage_.emplace_back();
  }
  last_tenant_ = it->second;
  return it->second;
}

void OnlineScheduler::submit(JobId id, Request r) {
  Entry& e = jobs_[id];
  e = Entry{};
  e.tenant = tenant_index(r.tenant);
  e.request = std::move(r);
  enqueue(id);
}

void OnlineScheduler::withdraw(JobId id) {
  const auto it = jobs_.find(id);
  if (it == jobs_.end() || it->second.running) return;
  dequeue(id);
  jobs_.erase(it);
}

void OnlineScheduler::adopt(JobId id, Request r, PoolPlacement p, double now) {
  Entry& e = jobs_[id];
  e = Entry{};
  e.tenant = tenant_index(r.tenant);
  e.request = std::move(r);
  start(id, std::move(p), now, nullptr);
}

void OnlineScheduler::finish(JobId id) {
  const auto it = jobs_.find(id);
  if (it == jobs_.end() || !it->second.running) return;
  stop(id);
  jobs_.erase(it);
}

void OnlineScheduler::block(int p, const Slice& s) { pools_[static_cast<std::size_t>(p)].take(s); }
void OnlineScheduler::unblock(int p, const Slice& s) { pools_[static_cast<std::size_t>(p)].give(s); }

void OnlineScheduler::enqueue(JobId id) {
  const Entry& e = jobs_.at(id);
  const QueueEntry q{key_of(e), id};
  queue_.insert(q);
  if (cfg_.order == QueueOrder::kDrf) tenant_queue_[e.tenant].insert(q);
  ++tenant_queued_[e.tenant];
  ++needs_[static_cast<std::size_t>(std::max(0, need_on_one_node(e.request)))];
  zero_gpu_queued_ += e.request.gpus <= 0 ? 1 : 0;
}

void OnlineScheduler::dequeue(JobId id) {
  const Entry& e = jobs_.at(id);
  const QueueEntry q{key_of(e), id};
  if (queue_.erase(q) == 0) return;
  if (cfg_.order == QueueOrder::kDrf) tenant_queue_[e.tenant].erase(q);
  --tenant_queued_[e.tenant];
  --needs_[static_cast<std::size_t>(std::max(0, need_on_one_node(e.request)))];
  zero_gpu_queued_ -= e.request.gpus <= 0 ? 1 : 0;
}

int OnlineScheduler::contending_tenants() const {
  int n = 0;
  for (const int queued : tenant_queued_) n += queued == 0 ? 0 : 1;
  return n;
}

double OnlineScheduler::dominant_share(const std::string& tenant) const {
  const auto it = tenant_ids_.find(tenant);
  return it == tenant_ids_.end() ? 0 : share_of(it->second);
}

double OnlineScheduler::share_of(std::size_t t) const {
  if (total_gpus_ == 0) return 0;
  double s = static_cast<double>(usage_[t].gpus) / total_gpus_;
  if (total_cpus_ > 0) s = std::max(s, static_cast<double>(usage_[t].cpus) / total_cpus_);
  return s;
}

int OnlineScheduler::stranded() const {
  const auto smallest = std::find_if(needs_.begin(), needs_.end(), [](int count) { return count != 0; });
  if (smallest == needs_.end()) return 0;
  const int below = static_cast<int>(smallest - needs_.begin());
  int n = 0;
  for (const Cluster& c : pools_) n += c.free_on_nodes_below(below);
  return n;
}

// FIFO (by priority): the first job in key order. DRF: the first job of the
// tenant with the smallest dominant share (GPU or CPU, whichever it uses more of).
std::optional<JobId> OnlineScheduler::head() const {
  if (queue_.empty()) return std::nullopt;
  if (cfg_.order == QueueOrder::kFifo) return queue_.begin()->second;
  const QueueEntry* best = nullptr;
  double best_share = 0;
  for (std::size_t t = 0; t < tenant_queue_.size(); ++t) {
    const auto& q = tenant_queue_[t];
    if (q.empty()) continue;
    const double s = share_of(t);
    const QueueEntry& cand = *q.begin();
    if (best == nullptr || s < best_share || (s == best_share && cand.first < best->first)) {
      best = &cand;
      best_share = s;
    }
  }
  return best->second;
}

bool OnlineScheduler::capped(const Request& r) const {
  return cfg_.gpu_cap >= 0 && held_gpus_ + r.gpus > cfg_.gpu_cap;
}

std::optional<PoolPlacement> OnlineScheduler::place_job(JobId id, const Request& r) const {
  for (int p : pools_of(r)) {
    auto got = hooks_.place ? hooks_.place(id, r, p, pool(p)) : place(pool(p), cfg_.policy, r.gpus, r.cpus);
    if (got) return PoolPlacement{p, std::move(*got)};
  }
  return std::nullopt;
}

void OnlineScheduler::start(JobId id, PoolPlacement p, double now, SchedulePass* pass) {
  Entry& e = jobs_.at(id);
  Cluster& c = pools_[static_cast<std::size_t>(p.pool)];
  for (const Slice& sl : p.placement) {
    c.take(sl);
    node_jobs_[static_cast<std::size_t>(p.pool)][static_cast<std::size_t>(sl.node)].push_back(id);
  }
  e.running = true;
  e.started = now;
  e.placement = std::move(p);
  Usage& u = usage_[e.tenant];
  u.gpus += e.request.gpus;
  u.cpus += e.request.cpus;
  held_gpus_ += e.request.gpus;
  running_priorities_.insert(e.request.priority);
  e.end = hooks_.on_start ? hooks_.on_start(id, e.placement) : kUnknownEnd;
  running_.insert({e.end, id});
  if (pass != nullptr) pass->events.push_back({SchedulerEvent::Kind::kStart, id, 0, e.placement});
}

// Returns a running job's GPUs; the entry stays (the caller requeues or erases it).
void OnlineScheduler::stop(JobId id) {
  Entry& e = jobs_.at(id);
  running_.erase({e.end, id});
  Cluster& c = pools_[static_cast<std::size_t>(e.placement.pool)];
  for (const Slice& sl : e.placement.placement) {
    c.give(sl);
    auto& v = node_jobs_[static_cast<std::size_t>(e.placement.pool)][static_cast<std::size_t>(sl.node)];
    v.erase(std::find(v.begin(), v.end(), id));
  }
  Usage& u = usage_[e.tenant];
  u.gpus -= e.request.gpus;
  u.cpus -= e.request.cpus;
  held_gpus_ -= e.request.gpus;
  running_priorities_.erase(running_priorities_.find(e.request.priority));
  e.running = false;
  e.placement = {};
}

// True when no queued job can start in this pass whatever is tried: every pool
// is full, every queued job needs a GPU, and nothing running may be preempted
// by anything queued (defragmentation moves GPUs, it frees none). On a busy
// cluster most of a skip pass is this state; seeing it saves a placement
// attempt, a dequeue and an enqueue per remaining job.
bool OnlineScheduler::nothing_can_start() const {
  if (zero_gpu_queued_ != 0 || queue_.empty()) return false;
  for (const Cluster& c : pools_) {
    if (c.total_free() != 0) return false;
  }
  if (!cfg_.preempt || running_priorities_.empty()) return true;
  const int highest_queued = -queue_.begin()->first.neg_priority;
  return highest_queued <= *running_priorities_.begin();
}

// kSkip when nothing_can_start(): every job still queued waits, in the order
// head() would have offered them (FIFO: key order; DRF: shares do not change
// while nothing starts, so by tenant share, then key). They stay queued.
void OnlineScheduler::wait_all_queued(std::vector<std::pair<JobId, Wait>>& aside) const {
  aside.reserve(aside.size() + queue_.size());
  const auto wait_of = [&](JobId id) {
    return cfg_.gpu_cap >= 0 && capped(jobs_.at(id).request) ? Wait::kCapped : Wait::kNoRoom;
  };
  if (cfg_.order == QueueOrder::kFifo) {  // key order is the order: no copy to sort
    for (const auto& [key, id] : queue_) aside.emplace_back(id, wait_of(id));
    return;
  }
  std::vector<QueueEntry> rest(queue_.begin(), queue_.end());
  std::vector<double> share(tenant_names_.size());
  for (std::size_t t = 0; t < share.size(); ++t) share[t] = share_of(t);
  std::stable_sort(rest.begin(), rest.end(), [&](const QueueEntry& a, const QueueEntry& b) {
    return share[jobs_.at(a.second).tenant] < share[jobs_.at(b.second).tenant];
  });
  for (const auto& [key, id] : rest) aside.emplace_back(id, wait_of(id));
}

SchedulePass OnlineScheduler::schedule(double now) {
  SchedulePass pass;
  std::vector<std::pair<JobId, Wait>> aside;  // kSkip: blocked jobs, back in the queue after the pass
  std::size_t still_queued = 0;               // the tail of `aside` that never left the queue
  while (const auto h = head()) {
    if (cfg_.blocking == Blocking::kSkip && nothing_can_start()) {
      const std::size_t before = aside.size();
      wait_all_queued(aside);
      still_queued = aside.size() - before;
      break;
    }
    const Request& r = jobs_.at(*h).request;
    const bool over_cap = capped(r);
    if (!over_cap) {
      if (auto p = place_job(*h, r)) {
        dequeue(*h);
        start(*h, std::move(*p), now, &pass);
        continue;
      }
      if (cfg_.preempt && preempt_for(*h, pass)) {
        // Start h on the room it made at once: re-asking the queue here would let
        // another tenant's job (DRF) take the freed GPUs and evict forever.
        if (auto p = place_job(*h, r)) {
          dequeue(*h);
          start(*h, std::move(*p), now, &pass);
          continue;
        }
        if (cfg_.blocking != Blocking::kSkip) break;
      }
      if (cfg_.defrag && defrag_for(*h, now, pass)) {
        if (auto p = place_job(*h, r)) {
          dequeue(*h);
          start(*h, std::move(*p), now, &pass);
          continue;
        }
      }
    }
    if (cfg_.blocking == Blocking::kSkip) {
      aside.emplace_back(*h, over_cap ? Wait::kCapped : Wait::kNoRoom);
      dequeue(*h);
      continue;
    }
    if (cfg_.blocking == Blocking::kBackfill && !over_cap) backfill_behind(*h, now, pass);
    break;  // strict order: nothing else jumps a blocked head
  }
  for (std::size_t i = 0; i + still_queued < aside.size(); ++i) enqueue(aside[i].first);
  pass.pending = std::move(aside);
  return pass;
}

// Makes room for `h` by evicting strictly lower-priority jobs from the one
// node where that evicts the fewest GPUs (least progress lost first among
// equals). Gangs wider than a node wait; they never evict.
bool OnlineScheduler::preempt_for(JobId h, SchedulePass& pass) {
  const Request& r = jobs_.at(h).request;
  // Nothing running has a lower priority: no node can make room (the common
  // case on a busy queue, so it costs O(1) rather than a scan of every node).
  if (running_priorities_.empty() || *running_priorities_.begin() >= r.priority) return false;
  int best_pool = -1;
  int best_node = -1;
  int best_cost = std::numeric_limits<int>::max();
  std::vector<JobId> best_victims;
  for (int p : pools_of(r)) {
    const Cluster& c = pool(p);
    if (r.gpus > c.gpus_per_node()) continue;
    for (int n = 0; n < c.nodes(); ++n) {
      std::vector<JobId> cand;
      for (JobId v : node_jobs_[static_cast<std::size_t>(p)][static_cast<std::size_t>(n)]) {
        if (jobs_.at(v).request.priority < r.priority) cand.push_back(v);
      }
      if (cand.empty()) continue;
      std::sort(cand.begin(), cand.end(), [&](JobId a, JobId b) {
        const Entry& ea = jobs_.at(a);
        const Entry& eb = jobs_.at(b);
        if (ea.request.priority != eb.request.priority) return ea.request.priority < eb.request.priority;
        return ea.started > eb.started;  // least progress lost first
      });
      int free_g = c.free_gpus(n);
      int free_c = c.free_cpus(n);
      int cost = 0;
      std::vector<JobId> victims;
      for (JobId v : cand) {
        if (free_g >= r.gpus && free_c >= r.cpus) break;
        for (const Slice& sl : jobs_.at(v).placement.placement) {
          if (sl.node == n) {
            free_g += popcount(sl.mask);
            free_c += sl.cpus;
          }
        }
        cost += jobs_.at(v).request.gpus;
        victims.push_back(v);
      }
      if (free_g >= r.gpus && free_c >= r.cpus && cost < best_cost) {
        best_pool = p;
        best_node = n;
        best_cost = cost;
        best_victims = std::move(victims);
      }
    }
  }
  if (best_node < 0 || best_pool < 0) return false;
  for (JobId v : best_victims) {
    stop(v);
    enqueue(v);
    pass.events.push_back({SchedulerEvent::Kind::kPreempt, v, h, {}});
    if (hooks_.on_preempt) hooks_.on_preempt(v, h);  // may withdraw v again
  }
  return true;
}

// Defragmentation, planned on a copy of the pool: clear one node at a time
// (the one whose clearing moves the fewest GPUs) by moving its small
// single-node jobs to other nodes, best fit, never onto a node being cleared,
// until the head fits. Nothing moves unless the whole plan lets the head start.
// It scans nodes, like preemption: it runs only for a blocked large head.
std::optional<std::vector<OnlineScheduler::Move>> OnlineScheduler::defrag_plan(const Request& r, int p) const {
  const Cluster& real = pool(p);
  const int g = real.gpus_per_node();
  if (r.gpus > real.total_gpus()) return std::nullopt;
  const int need = std::min(r.gpus, g);  // a gang clears whole nodes; its remainder fits one of them
  Cluster plan = real;
  std::vector<Move> moves;
  std::vector<int> cleared;    // nodes being cleared: nothing moves onto them
  std::vector<int> receivers;  // nodes that took moved jobs: their job lists are no longer node_jobs_
  const auto in = [](const std::vector<int>& v, int n) { return std::find(v.begin(), v.end(), n) != v.end(); };
  while (!place(plan, cfg_.policy, r.gpus, r.cpus)) {
    int best_node = -1;
    int best_cost = std::numeric_limits<int>::max();
    std::optional<Cluster> best_after;
    std::vector<Move> best_moves;
    for (int n = 0; n < plan.nodes(); ++n) {
      if (in(cleared, n) || in(receivers, n) || plan.free_gpus(n) >= need) continue;
      std::vector<JobId> small;
      for (JobId v : node_jobs_[static_cast<std::size_t>(p)][static_cast<std::size_t>(n)]) {
        const Entry& e = jobs_.at(v);
        if (e.placement.placement.size() == 1 && e.request.gpus < cfg_.defrag_min_gpus) small.push_back(v);
      }
      std::sort(small.begin(), small.end(), [&](JobId a, JobId b) {
        return std::pair(jobs_.at(a).request.gpus, a) < std::pair(jobs_.at(b).request.gpus, b);
      });
      Cluster after = plan;
      std::vector<JobId> out;
      int cost = 0;
      for (JobId v : small) {
        if (after.free_gpus(n) >= need && after.free_cpus(n) >= r.cpus) break;
        after.give(jobs_.at(v).placement.placement.front());
        out.push_back(v);
        cost += jobs_.at(v).request.gpus;
      }
      if (after.free_gpus(n) < need || cost >= best_cost) continue;
      std::vector<int> exclude = cleared;
      exclude.push_back(n);
      std::vector<Move> mv;
      bool fits = true;
      for (JobId v : out) {
        const Request& vr = jobs_.at(v).request;
        auto to = place(after, Policy::kBestFit, vr.gpus, vr.cpus, exclude);
        if (!to) {
          fits = false;
          break;
        }
        for (const Slice& sl : *to) after.take(sl);
        mv.push_back({v, std::move(*to)});
      }
      if (!fits) continue;
      best_node = n;
      best_cost = cost;
      best_after = std::move(after);
      best_moves = std::move(mv);
    }
    if (best_node < 0) return std::nullopt;
    plan = std::move(*best_after);
    cleared.push_back(best_node);
    for (Move& m : best_moves) {
      receivers.push_back(m.to.front().node);
      moves.push_back(std::move(m));
    }
  }
  return moves;
}

bool OnlineScheduler::defrag_for(JobId h, double now, SchedulePass& pass) {
  const Request& r = jobs_.at(h).request;
  if (r.gpus < cfg_.defrag_min_gpus) return false;
  for (int p : pools_of(r)) {
    auto moves = defrag_plan(r, p);
    if (!moves || moves->empty()) continue;
    for (Move& m : *moves) {
      stop(m.job);
      if (hooks_.on_migrate) hooks_.on_migrate(m.job, h);
      start(m.job, PoolPlacement{p, std::move(m.to)}, now, nullptr);
      pass.events.push_back({SchedulerEvent::Kind::kMigrate, m.job, h, jobs_.at(m.job).placement});
    }
    return true;
  }
  return false;
}

// EASY backfill: the blocked head gets a reservation at the earliest time
// running jobs free enough GPUs (in its first pool); a job behind it may start
// now if it keeps off the reserved nodes or ends before the reservation.
void OnlineScheduler::backfill_behind(JobId h, double now, SchedulePass& pass) {
  const Request& hr = jobs_.at(h).request;
  const int hp = pools_of(hr).front();
  const auto placement_of = [&](JobId j) -> const Placement& { return jobs_.at(j).placement.placement; };
  Reservation res;
  if (pools_.size() == 1) {
    res = reserve(pool(hp), hr.gpus, hr.cpus, running_, placement_of);
  } else {
    std::set<std::pair<double, JobId>> mine;
    for (const auto& rj : running_) {
      if (jobs_.at(rj.second).placement.pool == hp) mine.insert(rj);
    }
    res = reserve(pool(hp), hr.gpus, hr.cpus, mine, placement_of);
  }
  if (!res.found) return;
  int examined = 0;
  for (auto it = queue_.begin(); it != queue_.end() && examined < cfg_.backfill_depth;) {
    const JobId j = it->second;
    ++it;  // start() below removes j from the queue
    if (j == h) continue;
    ++examined;
    const Request& r = jobs_.at(j).request;
    if (capped(r)) continue;
    std::optional<PoolPlacement> p;
    for (int pl : pools_of(r)) {
      const std::span<const int> exclude =
          pl == hp ? std::span<const int>(res.nodes) : std::span<const int>();
      if (auto got = place(pool(pl), cfg_.policy, r.gpus, r.cpus, exclude)) {
        p = PoolPlacement{pl, std::move(*got)};
        break;
      }
    }
    if (!p) {
      p = place_job(j, r);
      if (!p) continue;
      const double end = hooks_.estimate_end ? hooks_.estimate_end(j, *p) : kUnknownEnd;
      if (end > res.time) continue;  // would delay the head
    }
    dequeue(j);
    start(j, std::move(*p), now, &pass);
  }
}

}  // namespace cluster_sim
