#include "platform/scheduler.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <unordered_map>

#include "cluster_sim/placement.hpp"
#include "platform/topology_placement.hpp"

namespace platform {
namespace {

namespace cs = cluster_sim;

bool usable(const Node& n, const Device& d, std::string_view backend) {
  return n.state == NodeState::kReady && !n.draining && d.backend == backend && d.health.healthy &&
         std::find(d.dtypes.begin(), d.dtypes.end(), kJobDtype) != d.dtypes.end();
}

// One backend's devices as a pool of the online scheduler: node i of the pool
// is nodes[members[i]], GPU bit b is the b-th device of that backend on it.
struct Pool {
  std::string backend;
  std::vector<int> members;  // pool node -> index into nodes
  PoolView view;             // pool node -> its name and bit -> device
  int gpus_per_node = 0;
  int capacity = 0;  // schedulable devices, allocated or not (for "larger than the cluster")
};

Pool build(const std::vector<Node>& nodes, std::string_view backend) {
  Pool p;
  p.backend = backend;
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    std::vector<const Device*> devs;
    for (const auto& d : nodes[i].devices) {
      if (d.backend == backend && devs.size() < 64) devs.push_back(&d);
    }
    if (devs.empty()) continue;
    p.members.push_back(static_cast<int>(i));
    p.gpus_per_node = std::max(p.gpus_per_node, static_cast<int>(devs.size()));
    p.view.node_names.push_back(nodes[i].name);
    p.view.devices.push_back(std::move(devs));
  }
  p.capacity = schedulable_devices(nodes, backend);
  return p;
}

// Where "<node>/<device>" is in the pools: (pool, pool node, bit).
struct Bit {
  int pool = 0;
  int node = 0;
  int bit = 0;
};

// Slices of one pool from a set of bits, one slice per pool node.
cs::Placement slices(const std::vector<Bit>& bits) {
  std::map<int, std::uint64_t> by_node;
  for (const auto& b : bits) by_node[b.node] |= std::uint64_t{1} << b.bit;
  cs::Placement out;
  for (const auto& [n, mask] : by_node) out.push_back(cs::Slice{n, mask, 0});
  return out;
}

}  // namespace

int schedulable_devices(const std::vector<Node>& nodes, std::string_view backend) {
  int n = 0;
  for (const auto& node : nodes) {
    for (const auto& d : node.devices) n += usable(node, d, backend) ? 1 : 0;
  }
  return n;
}

Plan schedule(const SchedulerInput& in, const std::vector<const Job*>& queue) {
  const auto& nodes = *in.nodes;

  // Pools: every backend some node has, in the auto order.
  std::vector<Pool> pools;
  std::map<std::string, int, std::less<>> pool_of;
  std::unordered_map<std::string, Bit> where;  // "<node>/<device>" -> its bit
  for (auto backend : kAutoBackendOrder) {
    Pool p = build(nodes, backend);
    if (p.members.empty()) continue;
    const int pi = static_cast<int>(pools.size());
    for (std::size_t c = 0; c < p.members.size(); ++c) {
      const auto& name = nodes[static_cast<std::size_t>(p.members[c])].name;
      for (std::size_t b = 0; b < p.view.devices[c].size(); ++b) {
        where[name + "/" + p.view.devices[c][b]->id] = Bit{pi, static_cast<int>(c), static_cast<int>(b)};
      }
    }
    pool_of.emplace(std::string(backend), pi);
    pools.push_back(std::move(p));
  }
  std::vector<cs::Cluster> clusters;
  for (const auto& p : pools) clusters.emplace_back(static_cast<int>(p.members.size()), p.gpus_per_node);

  // Every job the pass knows gets an id: the queue first, then the running jobs.
  std::vector<const Job*> all(queue);
  all.insert(all.end(), in.running.begin(), in.running.end());

  // Running jobs hold the allocated devices of their placement; allocated
  // devices no running job accounts for (a task still stopping) are blocked.
  std::set<std::string> owned;
  std::vector<std::pair<std::size_t, std::vector<Bit>>> adopted;
  for (std::size_t k = queue.size(); k < all.size(); ++k) {
    std::vector<Bit> bits;
    for (const auto& slot : all[k]->placement) {
      const auto key = slot.node + "/" + slot.device;
      const auto w = where.find(key);
      if (in.allocated.count(key) == 0 || w == where.end() || owned.count(key) != 0) continue;
      if (!bits.empty() && w->second.pool != bits.front().pool) continue;  // one pool per job
      owned.insert(key);
      bits.push_back(w->second);
    }
    if (!bits.empty()) adopted.emplace_back(k, std::move(bits));
  }
  int unowned = 0;
  for (std::size_t pi = 0; pi < pools.size(); ++pi) {
    const Pool& p = pools[pi];
    for (std::size_t c = 0; c < p.members.size(); ++c) {
      const Node& n = nodes[static_cast<std::size_t>(p.members[c])];
      std::uint64_t blocked = 0;
      for (int bit = 0; bit < p.gpus_per_node; ++bit) {
        const auto b = static_cast<std::size_t>(bit);
        if (b >= p.view.devices[c].size()) {
          blocked |= std::uint64_t{1} << bit;  // this node has fewer devices of the backend
          continue;
        }
        const Device& d = *p.view.devices[c][b];
        const auto key = n.name + "/" + d.id;
        if (owned.count(key) != 0) continue;
        const bool held = in.allocated.count(key) != 0;
        unowned += held ? 1 : 0;
        if (held || !usable(n, d, p.backend)) blocked |= std::uint64_t{1} << bit;
      }
      if (blocked != 0) clusters[pi].take(cs::Slice{static_cast<int>(c), blocked, 0});
    }
  }

  cs::SchedulerConfig cfg;
  cfg.policy = cs::Policy::kBestFit;
  cfg.order = in.order;
  cfg.preempt = in.preempt;
  cfg.blocking = cs::Blocking::kSkip;
  cfg.gpu_cap = in.device_cap < 0 ? -1 : std::max(0, in.device_cap - unowned);
  cs::OnlineScheduler* self = nullptr;
  cs::SchedulerHooks hooks;
  // A victim waits for the next pass: its tasks must stop before it runs again.
  hooks.on_preempt = [&self](cs::JobId victim, cs::JobId) { self->withdraw(victim); };
  // Where a job goes in a pool: topology-aware, by P08's cost model. The
  // estimate of the last placement found for a job is the one it starts on
  // (the scheduler starts a job on the placement it was just given).
  std::map<std::size_t, TopologyEstimate> estimates;
  hooks.place = [&](cs::JobId k, const cs::Request& r, int pool, const cs::Cluster& c) -> std::optional<cs::Placement> {
    auto choice = place_by_topology(c, pools[static_cast<std::size_t>(pool)].view, all[k]->spec, r.gpus);
    if (!choice) return std::nullopt;
    estimates[k] = std::move(choice->estimate);
    return std::move(choice->placement);
  };
  cs::OnlineScheduler sched(std::move(clusters), cfg, hooks);
  self = &sched;

  const auto request = [&](const Job& j, int gpus) {
    cs::Request r;
    r.gpus = gpus;
    r.priority = j.spec.priority;
    r.tenant = j.spec.tenant;
    r.seq = static_cast<std::size_t>(j.seq);
    return r;
  };
  for (const auto& [k, bits] : adopted) {
    sched.adopt(k, request(*all[k], static_cast<int>(bits.size())), cs::PoolPlacement{bits.front().pool, slices(bits)},
                all[k]->started_at);
  }
  for (std::size_t k = 0; k < queue.size(); ++k) {
    cs::Request r = request(*queue[k], queue[k]->spec.gpus);
    if (queue[k]->spec.backend == "auto") {
      for (auto b : kAutoBackendOrder) {
        if (!kind_runs_on(queue[k]->spec.kind, b)) continue;
        if (const auto it = pool_of.find(b); it != pool_of.end()) r.pools.push_back(it->second);
      }
    } else if (const auto it = pool_of.find(queue[k]->spec.backend); it != pool_of.end()) {
      r.pools.push_back(it->second);
    }
    if (!r.pools.empty()) sched.submit(k, std::move(r));  // no pool: no device of that backend anywhere
  }

  const auto pass = sched.schedule(0);

  Plan plan;
  std::map<std::size_t, std::optional<std::vector<Slot>>> placed;
  for (const auto& ev : pass.events) {
    if (ev.kind == cs::SchedulerEvent::Kind::kPreempt) {
      if (ev.job >= queue.size()) {
        plan.preempted.push_back(Preemption{all[ev.job]->id, all[ev.by]->id});
      } else {
        placed[ev.job].reset();  // placed earlier in this pass, evicted later in it
      }
      continue;
    }
    const Pool& p = pools[static_cast<std::size_t>(ev.placement.pool)];
    std::vector<Slot> slots;
    for (const auto& slice : ev.placement.placement) {
      const Node& n = nodes[static_cast<std::size_t>(p.members[static_cast<std::size_t>(slice.node)])];
      for (int bit = 0; bit < 64; ++bit) {
        if ((slice.mask >> bit & 1U) == 0) continue;
        const auto& id = p.view.devices[static_cast<std::size_t>(slice.node)][static_cast<std::size_t>(bit)]->id;
        slots.push_back(Slot{static_cast<int>(slots.size()), n.name, id, p.backend});
      }
    }
    placed[ev.job] = std::move(slots);
  }

  const int in_use = unowned + sched.held_gpus();
  std::map<std::size_t, cs::Wait> waits(pass.pending.begin(), pass.pending.end());
  for (std::size_t k = 0; k < queue.size(); ++k) {
    const Job& job = *queue[k];
    Decision d;
    d.job = job.id;
    if (const auto it = placed.find(k); it != placed.end() && it->second) {
      d.placement = it->second;
      if (const auto e = estimates.find(k); e != estimates.end()) d.topology = e->second;
      plan.decisions.push_back(std::move(d));
      continue;
    }
    const int want = job.spec.gpus;
    if (const auto w = waits.find(k); w != waits.end() && w->second == cs::Wait::kCapped) {
      d.reason = fmt::format("licence allows {} devices in use; {} in use, job needs {}", in.device_cap, in_use, want);
      plan.decisions.push_back(std::move(d));
      continue;
    }
    int best_capacity = 0;
    std::string best_backend;
    for (auto backend : kAutoBackendOrder) {
      if (job.spec.backend != "auto" && job.spec.backend != backend) continue;
      if (!kind_runs_on(job.spec.kind, backend)) continue;
      const auto it = pool_of.find(backend);
      if (it == pool_of.end()) continue;
      const int capacity = pools[static_cast<std::size_t>(it->second)].capacity;
      if (capacity > best_capacity) {
        best_capacity = capacity;
        best_backend = backend;
      }
    }
    const std::string what = job.spec.backend == "auto" ? "any one backend" : job.spec.backend;
    if (best_capacity < want) {
      d.reason = fmt::format("needs {} devices of {}; the cluster has {} schedulable", want, what, best_capacity);
    } else {
      d.reason = fmt::format("waiting for {} free devices of {} ({} schedulable, busy now)", want,
                             best_backend.empty() ? what : best_backend, best_capacity);
    }
    plan.decisions.push_back(std::move(d));
  }
  return plan;
}

}  // namespace platform
