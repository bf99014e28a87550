// The event-driven simulator. At each instant: completions release GPUs
// first, then arrivals join the queue in trace order, then one pass of the
// online scheduler (online_scheduler.hpp) runs. Every extension (preemption,
// DRF, topology, backfill) is a switch of that scheduler; the simulator adds
// simulated time, the topology slowdown and the accounting.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "cluster_sim/job.hpp"
#include "cluster_sim/online_scheduler.hpp"

namespace cluster_sim {

struct SimConfig {
  int nodes = 4;
  int gpus_per_node = 8;
  Policy policy = Policy::kBestFit;
  // Gangs (jobs larger than one node) commit atomically; without it they grab
  // GPUs node by node, round-robin with other gangs, and can deadlock.
  bool gang = true;
  QueueOrder order = QueueOrder::kFifo;  // by priority first, then arrival
  int cpus_per_node = 0;                 // 0 = CPUs not modelled (DRF needs them)
  // Topology (extension 3): islands of this many GPUs inside each node.
  int island_size = 0;                   // 0 = no topology penalty at all
  double island_penalty = 1.5;           // duration x this when a job spans islands of a node
  double node_penalty = 3.0;             // ... and x this when it spans nodes
  // Preemption (extension 1).
  bool preempt = false;
  double checkpoint_penalty = 30;        // added to a preempted job's remaining work
  // EASY backfill (extension 4).
  bool backfill = false;
  int backfill_depth = 100;              // queued jobs examined behind a blocked head
  // Extension 5. A large job needs at least this many GPUs.
  int large_gpus = 4;
  // The last reserve_nodes nodes form a pool only large jobs may use (they try
  // it first, then the rest); small jobs never land there.
  int reserve_nodes = 0;
  // A blocked large head may move running small single-node jobs to other
  // nodes; each move costs the moved job checkpoint_penalty of extra work.
  bool defrag = false;
};

struct JobOutcome {
  double first_start = -1;
  double end = -1;             // completion time; -1 if it never completed
  double wait = 0;             // total time queued (including after preemptions)
  double run_time = 0;         // total time holding GPUs
  int preemptions = 0;
  bool deadlocked = false;     // held a partial allocation when nothing else could happen
  bool spanned_islands = false;
  bool spanned_nodes = false;
};

struct TenantStats {
  int jobs = 0;
  double mean_wait = 0;
  double max_wait = 0;
  double gpu_time = 0;
  // Time-averaged dominant share while at least two tenants had queued work.
  double contended_share = 0;
};

struct SimResult {
  std::vector<JobOutcome> jobs;  // in trace order
  int completed = 0;
  int deadlocked = 0;
  double makespan = 0;           // last completion (or last event when nothing completes)
  double busy_gpu_time = 0;      // GPU-time held by running jobs, including work lost to preemption
  double util_pct = 0;           // 100 * busy / (total GPUs * makespan)
  double p50_wait = 0;
  double p99_wait = 0;
  int stranded_peak = 0;         // max over scheduling instants of free GPUs no pending job can use
  int preemptions = 0;
  int migrations = 0;            // defragmentation moves
  double lost_gpu_time = 0;      // GPU-time of work redone because of checkpoint penalties
  int events = 0;                // scheduling instants processed
  std::map<std::string, TenantStats> tenants;
};

// Throws gpulab::UsageError when a job can never fit the cluster or the pools
// it may use (the message names its trace line), or the pool settings are
// impossible (a reserve of every node, a reserve without gang scheduling).
SimResult simulate(const std::vector<Job>& jobs, const SimConfig& cfg);

}  // namespace cluster_sim
