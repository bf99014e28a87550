// The platform's side of the online scheduler: one pass turns the live
// inventory, the running jobs and the pending queue into placements and
// preemptions.
//
// The choices are P06's cluster_sim::OnlineScheduler (the library the
// simulator drives too): best fit, gangs atomic (whole nodes first, then the
// remainder on one node), priority order with preemption of strictly
// lower-priority jobs, FIFO or DRF across tenants. A job that does not fit
// does not block the ones behind it (durations are unknown, so there is no
// backfill reservation). Where in a pool a job goes is topology-aware
// (topology_placement.hpp): a train gang takes the feasible placement P08's
// cost model says all-reduces fastest, and a gang that fits on no one node
// spreads rather than waits. There is one pool per HAL backend, built from the
// inventory each pass: a device that is missing, unhealthy, not certified by
// conformance for the job's dtype, on a lost or draining node, or held by a
// task is a taken GPU bit. A pass costs O(nodes) to build plus O(G log N) per job.
//
// The control plane keeps one Scheduler between passes: the queue (P06's
// ordered tree of pending jobs and their tenants) stays, and a pass applies
// what changed since the last one — jobs that joined or left the queue — while
// the pools and the running jobs, which the live inventory and the tasks
// define, are rebuilt. schedule() is the same pass on a new Scheduler; the two
// give the same plan for the same input (scheduler_test.cpp checks it after
// random sequences of changes).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "cluster_sim/online_scheduler.hpp"
#include "platform/model.hpp"

namespace platform {

// The order a job with `backend: auto` tries backends in (fastest first).
inline constexpr std::string_view kAutoBackendOrder[] = {"cuda", "blas", "fast", "opencl", "cpu_ref"};

// The dtype every job kind of this platform computes in.
inline constexpr std::string_view kJobDtype = "f32";

// A device by its node's name and its id: views into strings the caller
// keeps alive for the pass (the control plane's tasks), so no key is built.
struct DeviceRef {
  std::string_view node;
  std::string_view device;
};

struct SchedulerInput {
  std::vector<const Node*> nodes;  // the inventory (the caller's nodes, not copies)
  std::vector<DeviceRef> allocated;  // devices held by running tasks, any order
  int device_cap = -1;              // licence cap on allocated devices; -1 = none
  int external_in_use = 0;          // devices held outside the agents (live Slurm jobs), under the same cap
  // Running jobs: their allocated devices can be taken back by preemption.
  std::vector<const Job*> running;
  bool preempt = true;  // a pending job may evict strictly lower-priority running ones
  cluster_sim::QueueOrder order = cluster_sim::QueueOrder::kFifo;
};

struct Decision {
  std::string job;
  std::optional<std::vector<Slot>> placement;  // nullopt: stays pending
  std::string reason;                          // why it stays pending
  TopologyEstimate topology;                   // placed: why there (a train gang's ring cost)
};

// A running job evicted to make room for a higher-priority one. It goes back
// to pending; the next pass may place it again.
struct Preemption {
  std::string job;
  std::string by;
};

struct Plan {
  std::vector<Decision> decisions;  // one per queued job, in queue order
  std::vector<Preemption> preempted;
};

// `queue` is the pending jobs (any order: the scheduler serves priority, then
// submission order). Jobs earlier in that order get devices first; a job that
// does not fit does not block later ones that do.
Plan schedule(const SchedulerInput& in, const std::vector<const Job*>& queue);

// A plan as text, one line per decision and preemption, every field: what
// tests and the benchmark compare two plans by.
std::string plan_text(const Plan& plan);

// schedule() with the queue kept from one pass to the next. A queued job is
// known by its id and seq; one whose spec changed is submitted again. The kept
// queue is used when `queue` is in strictly increasing seq (the control
// plane's order: ids are "j-" and the seq), the backends with devices and the
// order and preemption settings are those of the last pass; otherwise the
// pass starts from an empty queue, as schedule() does.
class Scheduler {
 public:
  Scheduler();
  ~Scheduler();
  Scheduler(Scheduler&&) noexcept;
  Scheduler& operator=(Scheduler&&) noexcept;
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  Plan pass(const SchedulerInput& in, const std::vector<const Job*>& queue);

  // Seqs of the jobs the kept queue holds, in the order it serves them (for tests).
  [[nodiscard]] std::vector<std::int64_t> queued() const;
  // Passes that started from an empty queue (the first, and any after a change the queue cannot follow).
  [[nodiscard]] int rebuilds() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// Devices of `backend` on nodes that are ready, healthy and certified: what
// the cluster could ever give one job (for "larger than the cluster" reasons).
int schedulable_devices(const std::vector<Node>& nodes, std::string_view backend);

}  // namespace platform
