// The online scheduler: a queue of pending jobs and the clusters they run on.
// schedule() places what it can now — policy, atomic gangs, priority order
// with preemption, DRF across tenants, EASY backfill or skipping a blocked
// head — and says what it did. It knows no clock: the simulator drives it with
// simulated time, the platform's control plane with the live inventory.
//
// A scheduler holds one or more pools (a Cluster each; the platform has one
// per HAL backend). A request names the pools it may use, preferred first.
#pragma once

#include <cstddef>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "cluster_sim/placement.hpp"

namespace cluster_sim {

using JobId = std::size_t;

enum class QueueOrder { kFifo, kDrf };

// What happens when the head of the queue does not fit and preemption (if on)
// cannot make room for it.
enum class Blocking {
  kStrict,    // nothing jumps it (the head waits, everything behind it waits)
  kBackfill,  // EASY: the head gets a reservation; jobs behind it that do not delay it start
  kSkip,      // it stays pending and the next job is tried (no reservation: the head can starve)
};

struct SchedulerConfig {
  Policy policy = Policy::kBestFit;
  QueueOrder order = QueueOrder::kFifo;  // by priority first, then seq
  bool preempt = false;                  // evict strictly lower-priority jobs for a blocked head
  Blocking blocking = Blocking::kStrict;
  int backfill_depth = 100;              // queued jobs examined behind a blocked head
  int gpu_cap = -1;                      // most GPUs running jobs may hold at once; -1 = no cap
  // Defragmentation: a blocked head of at least defrag_min_gpus GPUs may move
  // running single-node jobs smaller than that (checkpointable small jobs) to
  // other nodes of their pool, when that lets the head start now.
  bool defrag = false;
  int defrag_min_gpus = 4;
};

struct Request {
  int gpus = 1;
  int cpus = 0;  // 0 = CPU demand not modelled
  int priority = 0;
  std::string tenant = "default";
  std::size_t seq = 0;     // order among equal priorities (arrival); a requeued job keeps it
  std::vector<int> pools;  // pools it may run in, preferred first; empty = pool 0 only
};

struct PoolPlacement {
  int pool = 0;
  Placement placement;
};

// Callbacks into the driver, called during schedule() / adopt() so that what
// the driver books (a victim's remaining work) is current for the next choice.
struct SchedulerHooks {
  // A job starts on `p`; returns when it will end (infinity when unknown).
  std::function<double(JobId, const PoolPlacement& p)> on_start;
  // When a job would end if it started now on `p` (backfill asks before starting it).
  std::function<double(JobId, const PoolPlacement& p)> estimate_end;
  // A running job was evicted for `by` and is back in the queue (the hook may
  // withdraw it, to requeue it in a later pass).
  std::function<void(JobId victim, JobId by)> on_preempt;
  // A running job is moved (defragmentation) to make room for `by`; called
  // before on_start() books it on its new placement.
  std::function<void(JobId moved, JobId by)> on_migrate;
  // Where a job goes in one pool, all or nothing (nullopt: not there now).
  // Unset: place(pool, cfg.policy, gpus, cpus), P06's policies. The platform
  // sets it to choose among feasible placements by the topo-sim cost model;
  // queue order, preemption, DRF and the cap stay the scheduler's (EASY
  // backfill around a reservation still places by the policy).
  std::function<std::optional<Placement>(JobId, const Request&, int pool, const Cluster&)> place;
};

struct SchedulerEvent {
  enum class Kind { kStart, kPreempt, kMigrate };
  Kind kind = Kind::kStart;
  JobId job = 0;
  JobId by = 0;             // kPreempt, kMigrate: the job it made room for
  PoolPlacement placement;  // kStart; kMigrate: where the job now runs
};

// Why a job is still pending after a pass.
enum class Wait {
  kNoRoom,   // does not fit now (or is behind a blocked head)
  kCapped,   // would take the running jobs over gpu_cap
};

struct SchedulePass {
  std::vector<SchedulerEvent> events;              // in the order they happened
  std::vector<std::pair<JobId, Wait>> pending;     // kSkip only: every job left in the queue
};

class OnlineScheduler {
 public:
  OnlineScheduler(std::vector<Cluster> pools, SchedulerConfig cfg, SchedulerHooks hooks = {});

  // The job joins the queue.
  void submit(JobId id, Request r);
  // A pending job leaves the queue (cancelled). No-op for an unknown id.
  void withdraw(JobId id);
  // A job that is already running on `p` (placed by an earlier pass or outside
  // the scheduler): its GPUs are taken and it can be preempted.
  void adopt(JobId id, Request r, PoolPlacement p, double now);
  // A running job ends: its GPUs are free.
  void finish(JobId id);
  // GPUs no job may use (unhealthy, held outside the scheduler) and back.
  void block(int pool, const Slice& s);
  void unblock(int pool, const Slice& s);
  // Every running job leaves (as finish() would) and the pools are replaced,
  // blocked GPUs included; the queue, its order and the tenants stay. A driver
  // that sees the whole cluster anew each pass (the platform) keeps its queue
  // this way and adopts what runs afresh, instead of submitting every queued
  // job again. Each request keeps the pool indices it was submitted with.
  void replace_pools(std::vector<Cluster> pools);
  // The cap on GPUs running jobs may hold (SchedulerConfig::gpu_cap), for the next pass.
  void set_gpu_cap(int gpu_cap) { cfg_.gpu_cap = gpu_cap; }

  SchedulePass schedule(double now);

  [[nodiscard]] const Cluster& pool(int p) const { return pools_[static_cast<std::size_t>(p)]; }
  [[nodiscard]] int pools() const { return static_cast<int>(pools_.size()); }
  [[nodiscard]] bool pending_empty() const { return queue_.empty(); }
  // True while `id` is in the queue (submitted, not started, not withdrawn).
  [[nodiscard]] bool queued(JobId id) const;
  // The queued jobs in key order (priority, then seq, then id).
  [[nodiscard]] std::vector<JobId> queued_jobs() const;
  // (expected end, job) of every running job, soonest first.
  [[nodiscard]] const std::set<std::pair<double, JobId>>& running() const { return running_; }
  // Tenants with at least one queued job.
  [[nodiscard]] int contending_tenants() const;
  // A tenant's dominant share: its GPUs or CPUs over the total, whichever is larger.
  [[nodiscard]] double dominant_share(const std::string& tenant) const;
  // Free GPUs no pending job can use (they sit on nodes with fewer free GPUs
  // than the smallest pending need on one node).
  [[nodiscard]] int stranded() const;
  // GPUs held by running jobs (what gpu_cap limits).
  [[nodiscard]] int held_gpus() const { return held_gpus_; }

 private:
  struct QueueKey {
    int neg_priority;
    std::size_t seq;
    auto operator<=>(const QueueKey&) const = default;
  };
  using QueueEntry = std::pair<QueueKey, JobId>;
  struct Entry {
    Request request;
    std::size_t tenant = 0;  // index into tenant_names_
    bool running = false;
    double started = 0;
    double end = 0;
    PoolPlacement placement;
  };
  struct Usage {
    int gpus = 0;
    int cpus = 0;
  };

  [[nodiscard]] QueueKey key_of(const Entry& e) const { return {-e.request.priority, e.request.seq}; }
  [[nodiscard]] int need_on_one_node(const Request& r) const;
  [[nodiscard]] const std::vector<int>& pools_of(const Request& r) const;
  void count_pools();
  void enqueue(JobId id);
  void dequeue(JobId id);
  [[nodiscard]] std::optional<JobId> head() const;
  [[nodiscard]] std::optional<PoolPlacement> place_job(JobId id, const Request& r) const;
  void start(JobId id, PoolPlacement p, double now, SchedulePass* pass);
  void stop(JobId id);
  bool preempt_for(JobId h, SchedulePass& pass);
  bool defrag_for(JobId h, double now, SchedulePass& pass);
  struct Move {
    JobId job;
    Placement to;
  };
  [[nodiscard]] std::optional<std::vector<Move>> defrag_plan(const Request& r, int pool) const;
  void backfill_behind(JobId h, double now, SchedulePass& pass);
  [[nodiscard]] bool capped(const Request& r) const;
  [[nodiscard]] bool nothing_can_start() const;
  void wait_all_queued(std::vector<std::pair<JobId, Wait>>& aside) const;

  std::vector<Cluster> pools_;
  SchedulerConfig cfg_;
  SchedulerHooks hooks_;
  std::vector<int> pool0_{0};
  int total_gpus_ = 0;
  double total_cpus_ = 0;
  int held_gpus_ = 0;
  std::unordered_map<JobId, Entry> jobs_;
  std::set<QueueEntry> queue_;
  [[nodiscard]] std::size_t tenant_index(const std::string& name);
  [[nodiscard]] double share_of(std::size_t tenant) const;
  // Tenants by index (first seen first), so queue operations compare no strings.
  std::unordered_map<std::string, std::size_t> tenant_ids_;
  std::vector<std::string> tenant_names_;
  std::vector<std::set<QueueEntry>> tenant_queue_;  // DRF only: FIFO needs no per-tenant order
  std::vector<int> tenant_queued_;                  // queued jobs per tenant
  std::size_t last_tenant_ = 0;                     // tenant_index()'s last answer
  std::vector<Usage> usage_;
  std::vector<int> needs_;  // [g] -> queued jobs that need g GPUs on one node
  int zero_gpu_queued_ = 0;  // queued jobs that need no GPU (a placement hook might start one on a full pool)
  std::set<std::pair<double, JobId>> running_;
  std::multiset<int> running_priorities_;
  std::vector<std::vector<std::vector<JobId>>> node_jobs_;  // [pool][node] -> running jobs there
};

}  // namespace cluster_sim
