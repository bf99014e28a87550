#include "platform/scheduler.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <iterator>
#include <optional>
#include <tuple>
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

// Where one device is in the pools: (pool, pool node, bit); pool -1 for none.
struct Bit {
  int pool = -1;
  int node = 0;
  int bit = 0;
};

// The inventory as pools, built in one walk over the devices (a pass runs on
// every queue change, so it compares no "<node>/<device>" strings per device).
struct Pools {
  std::vector<Pool> pools;                       // every backend some node has, in the auto order
  std::map<std::string, int, std::less<>> of;    // backend -> pool
  std::vector<std::vector<Bit>> at;              // [node][device index] -> its bit
  std::unordered_map<std::string_view, int> node_of;  // node name -> index

  // "<node>/<device>" as (node, device index); nullopt for a device not in the inventory.
  [[nodiscard]] std::optional<std::pair<int, int>> find(const std::vector<const Node*>& nodes, std::string_view node,
                                                        std::string_view device) const {
    const auto n = node_of.find(node);
    if (n == node_of.end()) return std::nullopt;
    return find_on(nodes, n->second, device);
  }
  [[nodiscard]] static std::optional<std::pair<int, int>> find_on(const std::vector<const Node*>& nodes, int n,
                                                                  std::string_view device) {
    const auto& devs = nodes[static_cast<std::size_t>(n)]->devices;
    for (std::size_t j = 0; j < devs.size(); ++j) {
      if (devs[j].id == device) return std::pair{n, static_cast<int>(j)};
    }
    return std::nullopt;
  }
};

Pools build_pools(const std::vector<const Node*>& nodes) {
  constexpr std::size_t kBackends = std::size(kAutoBackendOrder);
  std::array<Pool, kBackends> by_backend;
  Pools out;
  out.at.resize(nodes.size());
  out.node_of.reserve(nodes.size());
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    const Node& node = *nodes[i];
    out.node_of.emplace(node.name, static_cast<int>(i));
    out.at[i].assign(node.devices.size(), Bit{});
    std::array<int, kBackends> pool_node;
    pool_node.fill(-1);
    for (std::size_t j = 0; j < node.devices.size(); ++j) {
      const Device& d = node.devices[j];
      const auto b = static_cast<std::size_t>(
          std::find(std::begin(kAutoBackendOrder), std::end(kAutoBackendOrder), d.backend) - std::begin(kAutoBackendOrder));
      if (b == kBackends) continue;
      Pool& p = by_backend[b];
      p.capacity += usable(node, d, kAutoBackendOrder[b]) ? 1 : 0;
      if (pool_node[b] < 0) {
        pool_node[b] = static_cast<int>(p.members.size());
        p.members.push_back(static_cast<int>(i));
        p.view.node_names.push_back(node.name);
        p.view.devices.emplace_back().reserve(node.devices.size());
      }
      auto& devs = p.view.devices[static_cast<std::size_t>(pool_node[b])];
      if (devs.size() >= 64) continue;  // a pool node is one 64-bit mask
      out.at[i][j] = Bit{static_cast<int>(b), pool_node[b], static_cast<int>(devs.size())};
      devs.push_back(&d);
      p.gpus_per_node = std::max(p.gpus_per_node, static_cast<int>(devs.size()));
    }
  }
  // Backend positions -> pool indices, skipping backends no node has.
  std::array<int, kBackends> pool_index;
  pool_index.fill(-1);
  for (std::size_t b = 0; b < kBackends; ++b) {
    if (by_backend[b].members.empty()) continue;
    pool_index[b] = static_cast<int>(out.pools.size());
    by_backend[b].backend = kAutoBackendOrder[b];
    out.of.emplace(std::string(kAutoBackendOrder[b]), pool_index[b]);
    out.pools.push_back(std::move(by_backend[b]));
  }
  for (auto& row : out.at) {
    for (Bit& bit : row) {
      if (bit.pool >= 0) bit.pool = pool_index[static_cast<std::size_t>(bit.pool)];
    }
  }
  return out;
}

// Slices of one pool from a set of bits, one slice per pool node.
cs::Placement slices(const std::vector<Bit>& bits) {
  std::map<int, std::uint64_t> by_node;
  for (const auto& b : bits) by_node[b.node] |= std::uint64_t{1} << b.bit;
  cs::Placement out;
  for (const auto& [n, mask] : by_node) out.push_back(cs::Slice{n, mask, 0});
  return out;
}

// Why a job stays pending, for `gpulabctl describe`.
std::string pending_reason(const Job& job, bool capped, int device_cap, int in_use, const std::vector<Pool>& pools,
                           const std::map<std::string, int, std::less<>>& pool_of) {
  const int want = job.spec.gpus;
  if (capped) return fmt::format("licence allows {} devices in use; {} in use, job needs {}", device_cap, in_use, want);
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
    return fmt::format("needs {} devices of {}; the cluster has {} schedulable", want, what, best_capacity);
  }
  return fmt::format("waiting for {} free devices of {} ({} schedulable, busy now)", want,
                     best_backend.empty() ? what : best_backend, best_capacity);
}

}  // namespace

int schedulable_devices(const std::vector<Node>& nodes, std::string_view backend) {
  int n = 0;
  for (const auto& node : nodes) {
    for (const auto& d : node.devices) n += usable(node, d, backend) ? 1 : 0;
  }
  return n;
}

namespace {

// Ids the pass gives the running jobs it adopts: above every queued job's.
constexpr cs::JobId kRunningBase = cs::JobId{1} << 48;

// A job in the kept queue: what its request was made of, to see whether the
// job the next pass names is still the same request. No strings: the tenant
// and backend are indices into the kept queue's names.
struct Queued {
  cs::JobId id = 0;
  std::int64_t seq = 0;
  int gpus = 0;
  int priority = 0;
  std::uint32_t tenant = 0;
  std::uint32_t backend = 0;
  JobKind kind = JobKind::kMatmul;
};

// Strings a kept queue names again and again (tenants, backends), by index.
class Names {
 public:
  std::uint32_t index(const std::string& s) {
    if (last_ < names_.size() && names_[last_] == s) return last_;
    for (std::uint32_t i = 0; i < names_.size(); ++i) {
      if (names_[i] == s) return last_ = i;
    }
    names_.push_back(s);
    return last_ = static_cast<std::uint32_t>(names_.size() - 1);
  }
  [[nodiscard]] const std::string& operator[](std::uint32_t i) const { return names_[i]; }
  void clear() {
    names_.clear();
    last_ = 0;
  }

 private:
  std::vector<std::string> names_;
  std::uint32_t last_ = 0;
};

// The pools a job may use, preferred first, for one (backend, kind): a pass
// has a few job shapes, so this is worked out once per shape.
struct PoolChoice {
  std::string backend;
  JobKind kind = JobKind::kMatmul;
  std::vector<int> pools;
};

const std::vector<int>& pools_for(std::vector<PoolChoice>& cache, const JobSpec& spec,
                                  const std::map<std::string, int, std::less<>>& pool_of) {
  for (const auto& c : cache) {
    if (c.kind == spec.kind && c.backend == spec.backend) return c.pools;
  }
  PoolChoice c{spec.backend, spec.kind, {}};
  if (spec.backend == "auto") {
    for (auto b : kAutoBackendOrder) {
      if (!kind_runs_on(spec.kind, b)) continue;
      if (const auto it = pool_of.find(b); it != pool_of.end()) c.pools.push_back(it->second);
    }
  } else if (const auto it = pool_of.find(spec.backend); it != pool_of.end()) {
    c.pools.push_back(it->second);
  }
  cache.push_back(std::move(c));
  return cache.back().pools;
}

}  // namespace

struct Scheduler::State {
  // Kept between passes.
  std::optional<cs::OnlineScheduler> sched;
  std::vector<std::string> backends;  // the pools' backends when `sched` was built
  cs::QueueOrder order = cs::QueueOrder::kFifo;
  bool preempt = true;
  std::vector<Queued> queued;  // the kept queue, by seq
  std::vector<Queued> next;    // the next kept queue, while merge() builds it
  Names names;                 // tenants and backends of `queued`
  std::vector<cs::JobId> free_ids;
  cs::JobId next_id = 0;
  int rebuilds = 0;

  // This pass: what the scheduler's hooks look up by job id.
  std::vector<PoolTopology> topologies;  // [pool]: its islands and link facts, built by the first gang that asks
  const std::vector<const Job*>* pass_queue = nullptr;
  const std::vector<const Job*>* pass_running = nullptr;
  std::vector<std::size_t> pos_of;  // [queued job id] -> index into *queue
  std::vector<std::optional<TopologyEstimate>> estimates;  // by queue index

  [[nodiscard]] const Job& job_of(cs::JobId k) const {
    return k >= kRunningBase ? *(*pass_running)[k - kRunningBase] : *(*pass_queue)[pos_of[k]];
  }

  cs::SchedulerHooks hooks() {
    cs::SchedulerHooks h;
    // A victim waits for the next pass: its tasks must stop before it runs again.
    h.on_preempt = [this](cs::JobId victim, cs::JobId) { sched->withdraw(victim); };
    // Where a job goes in a pool: topology-aware, by P08's cost model. The
    // estimate of the last placement found for a job is the one it starts on
    // (the scheduler starts a job on the placement it was just given).
    h.place = [this](cs::JobId k, const cs::Request& r, int pool, const cs::Cluster& c) -> std::optional<cs::Placement> {
      auto choice = place_by_topology(c, topologies[static_cast<std::size_t>(pool)], job_of(k).spec, r.gpus);
      if (!choice) return std::nullopt;
      if (k < kRunningBase) estimates[pos_of[k]] = std::move(choice->estimate);
      return std::move(choice->placement);
    };
    return h;
  }

  Plan run(const SchedulerInput& in, const std::vector<const Job*>& queue);

  cs::JobId new_id() {
    if (free_ids.empty()) return next_id++;
    const cs::JobId id = free_ids.back();
    free_ids.pop_back();
    return id;
  }

  // A job of the kept queue that is not in this pass's queue, or no longer
  // the same request: it leaves the scheduler (a started one already has).
  void drop(const Queued& q) {
    sched->withdraw(q.id);
    free_ids.push_back(q.id);
  }

  [[nodiscard]] bool same_request(const Queued& q, const Job& j) const {
    return j.seq == q.seq && j.spec.gpus == q.gpus && j.spec.priority == q.priority && j.spec.kind == q.kind &&
           j.spec.tenant == names[q.tenant] && j.spec.backend == names[q.backend];
  }

  // The kept queue brought to `q` (in strictly increasing seq): a merge of
  // two seq-ordered lists, so a job that stayed costs two comparisons and a
  // lookup, not a tree insert.
  void merge(const std::vector<const Job*>& q, const std::map<std::string, int, std::less<>>& pool_of) {
    std::vector<PoolChoice> choices;
    next.clear();
    next.reserve(q.size());
    std::size_t p = 0;
    for (std::size_t k = 0; k < q.size(); ++k) {
      const Job& job = *q[k];
      while (p < queued.size() && queued[p].seq < job.seq) drop(queued[p++]);
      bool kept = false;
      if (p < queued.size() && queued[p].seq == job.seq) {
        const Queued& old = queued[p++];
        kept = same_request(old, job) && sched->queued(old.id);
        if (kept) {
          next.push_back(old);
        } else {
          drop(old);
        }
      }
      if (!kept) {
        const auto& pools_of_job = pools_for(choices, job.spec, pool_of);
        if (pools_of_job.empty()) continue;  // no device of that backend anywhere
        cs::Request r;
        r.gpus = job.spec.gpus;
        r.priority = job.spec.priority;
        r.tenant = job.spec.tenant;
        r.seq = static_cast<std::size_t>(job.seq);
        r.pools = pools_of_job;
        const cs::JobId id = new_id();
        if (pos_of.size() <= id) pos_of.resize(id + 1);
        pos_of[id] = k;
        sched->submit(id, std::move(r));
        next.push_back(Queued{id, job.seq, job.spec.gpus, job.spec.priority, names.index(job.spec.tenant),
                              names.index(job.spec.backend), job.spec.kind});
      }
      pos_of[next.back().id] = k;
    }
    while (p < queued.size()) drop(queued[p++]);
    std::swap(queued, next);
  }
};

Scheduler::Scheduler() : state_(std::make_unique<State>()) {}
Scheduler::~Scheduler() = default;
Scheduler::Scheduler(Scheduler&&) noexcept = default;
Scheduler& Scheduler::operator=(Scheduler&&) noexcept = default;

int Scheduler::rebuilds() const { return state_->rebuilds; }

std::vector<std::int64_t> Scheduler::queued() const {
  std::vector<std::int64_t> out;
  if (!state_->sched) return out;
  std::unordered_map<cs::JobId, std::int64_t> seq;
  for (const auto& q : state_->queued) seq.emplace(q.id, q.seq);
  for (const cs::JobId id : state_->sched->queued_jobs()) out.push_back(seq.at(id));
  return out;
}

Plan schedule(const SchedulerInput& in, const std::vector<const Job*>& queue) { return Scheduler{}.pass(in, queue); }

std::string plan_text(const Plan& plan) {
  std::string out;
  for (const auto& d : plan.decisions) {
    if (!d.placement) {
      out += fmt::format("{} pending: {}\n", d.job, d.reason);
      continue;
    }
    out += d.job + " placed:";
    for (const auto& s : *d.placement) out += fmt::format(" {}={}/{}({})", s.rank, s.node, s.device, s.backend);
    const auto& t = d.topology;
    out += fmt::format(" ranks={} bytes={} allreduce_s={} bottleneck={} nodes={} islands={} considered={} next={} {}\n",
                       t.ranks, t.bytes, t.allreduce_s, t.bottleneck, t.nodes, t.islands, t.considered, t.next_best_s,
                       t.reason);
  }
  for (const auto& p : plan.preempted) out += fmt::format("{} preempted by {}\n", p.job, p.by);
  return out;
}

Plan Scheduler::pass(const SchedulerInput& in, const std::vector<const Job*>& queue) {
  try {
    return state_->run(in, queue);
  } catch (...) {
    // Half a pass leaves the kept queue unknown: the next one starts afresh.
    const int rebuilds = state_->rebuilds;
    state_ = std::make_unique<State>();
    state_->rebuilds = rebuilds;
    throw;
  }
}

Plan Scheduler::State::run(const SchedulerInput& in, const std::vector<const Job*>& queue) {
  State& st = *this;
  const auto& nodes = in.nodes;

  Pools index = build_pools(nodes);
  const std::vector<Pool>& pools = index.pools;
  const auto& pool_of = index.of;
  std::vector<cs::Cluster> clusters;
  clusters.reserve(pools.size());
  for (const auto& p : pools) clusters.emplace_back(static_cast<int>(p.members.size()), p.gpus_per_node);

  // Node i's devices are [first[i], first[i + 1]) of the flat per-device tables.
  std::vector<std::size_t> first(nodes.size() + 1, 0);
  for (std::size_t i = 0; i < nodes.size(); ++i) first[i + 1] = first[i] + nodes[i]->devices.size();
  // The allocated devices.
  std::vector<char> held(first.back(), 0);
  // A node's devices mostly come together: look its name up once for a run of them.
  std::string_view last_node;
  int last_index = -1;
  bool looked_up = false;
  for (const auto& [node, device] : in.allocated) {
    if (!looked_up || node != last_node) {
      looked_up = true;
      last_node = node;
      const auto n = index.node_of.find(node);
      last_index = n == index.node_of.end() ? -1 : n->second;
    }
    if (last_index < 0) continue;
    if (const auto at = Pools::find_on(nodes, last_index, device)) {
      held[first[static_cast<std::size_t>(at->first)] + static_cast<std::size_t>(at->second)] = 1;
    }
  }

  // Running jobs hold the allocated devices of their placement; allocated
  // devices no running job accounts for (a task still stopping) are blocked.
  std::vector<char> owned(first.back(), 0);
  std::vector<std::pair<std::size_t, std::vector<Bit>>> adopted;  // (index into in.running, its bits)
  for (std::size_t k = 0; k < in.running.size(); ++k) {
    std::vector<Bit> bits;
    for (const auto& slot : in.running[k]->placement) {
      const auto at = index.find(nodes, slot.node, slot.device);
      if (!at) continue;
      const auto i = static_cast<std::size_t>(at->first);
      const auto j = static_cast<std::size_t>(at->second);
      const Bit& b = index.at[i][j];
      if (held[first[i] + j] == 0 || b.pool < 0 || owned[first[i] + j] != 0) continue;
      if (!bits.empty() && b.pool != bits.front().pool) continue;  // one pool per job
      owned[first[i] + j] = 1;
      bits.push_back(b);
    }
    if (!bits.empty()) adopted.emplace_back(k, std::move(bits));
  }
  int unowned = in.external_in_use;  // held but not by a running job of this pass: counts against the cap only
  std::vector<std::vector<std::uint64_t>> blocked(pools.size());
  for (std::size_t pi = 0; pi < pools.size(); ++pi) {
    const Pool& p = pools[pi];
    blocked[pi].resize(p.members.size());
    for (std::size_t c = 0; c < p.members.size(); ++c) {
      // Bits past this node's own devices of the backend: a node with fewer than the widest.
      for (auto bit = p.view.devices[c].size(); bit < static_cast<std::size_t>(p.gpus_per_node); ++bit) {
        blocked[pi][c] |= std::uint64_t{1} << bit;
      }
    }
  }
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    for (std::size_t j = 0; j < nodes[i]->devices.size(); ++j) {
      const Bit& b = index.at[i][j];
      if (b.pool < 0 || owned[first[i] + j] != 0) continue;
      unowned += held[first[i] + j];
      const auto& backend = pools[static_cast<std::size_t>(b.pool)].backend;
      if (held[first[i] + j] != 0 || !usable(*nodes[i], nodes[i]->devices[j], backend)) {
        blocked[static_cast<std::size_t>(b.pool)][static_cast<std::size_t>(b.node)] |= std::uint64_t{1} << b.bit;
      }
    }
  }
  for (std::size_t pi = 0; pi < pools.size(); ++pi) {
    for (std::size_t c = 0; c < blocked[pi].size(); ++c) {
      if (blocked[pi][c] != 0) clusters[pi].take(cs::Slice{static_cast<int>(c), blocked[pi][c], 0});
    }
  }

  cs::SchedulerConfig cfg;
  cfg.policy = cs::Policy::kBestFit;
  cfg.order = in.order;
  cfg.preempt = in.preempt;
  cfg.blocking = cs::Blocking::kSkip;
  cfg.gpu_cap = in.device_cap < 0 ? -1 : std::max(0, in.device_cap - unowned);

  // The kept queue follows this pass's only when its job ids stay comparable:
  // unique seqs (so no two queued jobs tie and the order cannot depend on
  // when each was submitted) and the same pools and settings.
  bool keep = st.sched.has_value() && st.order == in.order && st.preempt == in.preempt &&
              st.backends.size() == pools.size();
  for (std::size_t pi = 0; keep && pi < pools.size(); ++pi) keep = st.backends[pi] == pools[pi].backend;
  for (std::size_t k = 1; keep && k < queue.size(); ++k) keep = queue[k - 1]->seq < queue[k]->seq;
  st.topologies.clear();
  for (const auto& p : pools) st.topologies.emplace_back(p.view);
  st.pass_queue = &queue;
  st.pass_running = &in.running;
  st.estimates.assign(queue.size(), std::nullopt);
  if (keep) {
    st.sched->replace_pools(std::move(clusters));
    st.sched->set_gpu_cap(cfg.gpu_cap);
  } else {
    ++st.rebuilds;
    st.sched.reset();
    st.queued.clear();
    st.names.clear();
    st.free_ids.clear();
    st.next_id = 0;
    st.order = in.order;
    st.preempt = in.preempt;
    st.backends.clear();
    for (const auto& p : pools) st.backends.push_back(p.backend);
    st.sched.emplace(std::move(clusters), cfg, st.hooks());
  }

  const auto request = [&](const Job& j, int gpus) {
    cs::Request r;
    r.gpus = gpus;
    r.priority = j.spec.priority;
    r.tenant = j.spec.tenant;
    r.seq = static_cast<std::size_t>(j.seq);
    return r;
  };
  for (const auto& [k, bits] : adopted) {
    st.sched->adopt(kRunningBase + k, request(*in.running[k], static_cast<int>(bits.size())),
                cs::PoolPlacement{bits.front().pool, slices(bits)}, in.running[k]->started_at);
  }
  st.merge(queue, pool_of);

  const auto pass = st.sched->schedule(0);

  Plan plan;
  std::vector<std::optional<std::vector<Slot>>> placed(queue.size());  // by queue index
  for (const auto& ev : pass.events) {
    if (ev.kind == cs::SchedulerEvent::Kind::kPreempt) {
      if (ev.job >= kRunningBase) {
        plan.preempted.push_back(Preemption{st.job_of(ev.job).id, st.job_of(ev.by).id});
      } else {
        placed[st.pos_of[ev.job]].reset();  // placed earlier in this pass, evicted later in it
      }
      continue;
    }
    if (ev.job >= kRunningBase) continue;  // only queued jobs start in a pass
    const Pool& p = pools[static_cast<std::size_t>(ev.placement.pool)];
    std::vector<Slot> slots;
    for (const auto& slice : ev.placement.placement) {
      const Node& n = *nodes[static_cast<std::size_t>(p.members[static_cast<std::size_t>(slice.node)])];
      for (int bit = 0; bit < 64; ++bit) {
        if ((slice.mask >> bit & 1U) == 0) continue;
        const auto& id = p.view.devices[static_cast<std::size_t>(slice.node)][static_cast<std::size_t>(bit)]->id;
        slots.push_back(Slot{static_cast<int>(slots.size()), n.name, id, p.backend});
      }
    }
    placed[st.pos_of[ev.job]] = std::move(slots);
  }

  const int in_use = unowned + st.sched->held_gpus();
  std::vector<bool> capped(queue.size());
  for (const auto& [k, wait] : pass.pending) {
    if (k < kRunningBase) capped[st.pos_of[k]] = wait == cs::Wait::kCapped;
  }
  // Why a job waits depends only on what it asks for, so a busy queue of a few
  // job shapes formats a few reasons, not one per job.
  std::map<std::tuple<bool, int, std::string_view, JobKind>, std::string> reasons;
  plan.decisions.reserve(queue.size());
  for (std::size_t k = 0; k < queue.size(); ++k) {
    const Job& job = *queue[k];
    Decision d;
    d.job = job.id;
    if (placed[k]) {
      d.placement = std::move(placed[k]);
      if (st.estimates[k]) d.topology = std::move(*st.estimates[k]);
      plan.decisions.push_back(std::move(d));
      continue;
    }
    const auto [reason, added] = reasons.try_emplace({capped[k], job.spec.gpus, job.spec.backend, job.spec.kind});
    if (added) reason->second = pending_reason(job, capped[k], in.device_cap, in_use, pools, pool_of);
    d.reason = reason->second;
    plan.decisions.push_back(std::move(d));
  }
  // The hooks' view of this pass ends with it.
  st.topologies.clear();
  st.pass_queue = nullptr;
  st.pass_running = nullptr;
  return plan;
}

}  // namespace platform
