// The control plane's state machine, independent of HTTP: jobs are admitted,
// placed by the scheduler, handed to node agents through their heartbeats,
// restarted when a rank fails or a node is lost, and finished when every rank
// reports. Every change is written through to the Store before it is visible.
//
// Agents and the control plane reconcile level-triggered, like a kubelet: each
// heartbeat carries every task the agent knows (running or finished and not
// yet acknowledged) and gets back every task the node should run. Either side
// can restart and the next heartbeat repairs the difference.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "gpulab/json.hpp"
#include "gpulab/prom_text.hpp"
#include "cluster_sim/online_scheduler.hpp"
#include "platform/licence_policy.hpp"
#include "platform/model.hpp"
#include "platform/scheduler.hpp"
#include "platform/slurm_executor.hpp"
#include "platform/store.hpp"

namespace platform {

// Bumped when the agent <-> control plane messages change incompatibly.
// 2: devices are the shared inventory's accelerators (version 1 had its own
// {id, backend, index, healthy, health_reason, dtypes}).
inline constexpr int kProtocolVersion = 2;
// The oldest agent protocol this control plane still speaks: N-1, so a fleet
// upgrades its control plane first and its agents one node at a time
// (docs/release/rolling-upgrade.md). An agent of an older or a newer protocol
// is refused at registration with a message naming both versions.
inline constexpr int kOldestAgentProtocol = kProtocolVersion - 1;

struct ControlOptions {
  std::filesystem::path state_dir;
  Durability durability = Durability::kProcessCrash;
  std::chrono::milliseconds heartbeat_interval{1000};
  std::chrono::milliseconds node_timeout{5000};
  std::string public_url;  // how tasks reach the control plane (rendezvous)
  LicenceOptions licence;
  bool preempt = true;  // a pending job evicts strictly lower-priority running ones
  cluster_sim::QueueOrder queue_order = cluster_sim::QueueOrder::kFifo;  // or DRF across tenants
  std::function<double()> clock;  // Unix seconds (tests inject one)
  SlurmOptions slurm;             // jobs with `executor: slurm` (slurm_dispatch.cpp)
};

// An error the API maps to an HTTP status: 400 bad input (names the field),
// 403 refused by the licence, 404 unknown id, 409 conflict.
struct ApiError : std::runtime_error {
  ApiError(int http_status, const std::string& what) : std::runtime_error(what), status(http_status) {}
  int status;
};

// What an agent reports about one task.
struct TaskReport {
  std::string id;
  TaskState state = TaskState::kRunning;
  int exit_code = -1;
  std::string message;
  gpulab::Json result;  // the task's "done" line, when it printed one
  std::string log;      // final stdout+stderr (capped by the agent), when finished
  std::string isolation;
  std::vector<std::string> device_nodes = {};  // host device nodes its container got
  std::string endpoint = {};  // a running serve task's URL, once its GET /health answered
};

struct Heartbeat {
  std::string node;
  std::vector<Device> devices;  // current health
  std::vector<TaskReport> tasks;
};

// The programs an agent runs: it maps these names to its own binaries and
// runs nothing else, whatever an assignment says.
inline constexpr std::string_view kTaskProgram = "gpulab-task";
inline constexpr std::string_view kServeProgram = "gpulab-serve";

// What the node should run: every non-terminal task assigned to it, with the
// command line the agent starts.
struct Assignment {
  Task task;
  std::string program = std::string(kTaskProgram);  // or kServeProgram: a service, kept running
  std::vector<std::string> argv;  // after the program name; a server's --listen is the agent's to add
};

class ControlPlane {
 public:
  explicit ControlPlane(ControlOptions options);
  ~ControlPlane();
  ControlPlane(const ControlPlane&) = delete;
  ControlPlane& operator=(const ControlPlane&) = delete;

  // Jobs. submit() returns {job, created}; the same idempotency key returns the
  // first job with created=false. Throws ApiError (400/403).
  std::pair<Job, bool> submit(const gpulab::Json& spec_doc, const std::string& idempotency_key);
  Job get_job(const std::string& id) const;
  std::vector<Job> list_jobs() const;
  Job cancel(const std::string& id);
  std::vector<Task> tasks_of(const std::string& job_id) const;
  // The job's logs: every task of its latest attempt, rank order, with headers.
  std::string logs(const std::string& job_id) const;

  // Nodes.
  void register_node(const Node& node);
  // Applies the report and returns what the node should run. Waits up to
  // `wait` for a change to this node's assignments (long poll) when nothing
  // changed, so a placement reaches its agent at once.
  std::vector<Assignment> heartbeat(const Heartbeat& hb, std::chrono::milliseconds wait);
  void report_task(const std::string& node, const TaskReport& report);
  Node drain(const std::string& name);
  std::vector<Node> list_nodes() const;
  // The protocol `name` registered with (kProtocolVersion for a node not known).
  int node_protocol(const std::string& name) const;

  // Train gangs find each other here (the contract gpulab-task implements).
  void rendezvous_publish(const std::string& job, int attempt, int rank, int world, const std::string& address,
                          int port);
  gpulab::Json rendezvous_get(const std::string& job, int attempt) const;

  // Node liveness, licence refresh, scheduling. Runs on its own thread once
  // start() is called; tests may call tick() directly.
  void tick();
  void start();
  void stop();

  [[nodiscard]] LicenceStatus licence() const;
  [[nodiscard]] std::string metrics() const;

  // What the next scheduling pass would decide, without applying it: the
  // pass tick() runs, up to the plan (bench-platform's BM_ControlPlanePass
  // times it on a busy cluster; the plan is not applied, so calling it again
  // gives the same plan).
  Plan plan_pass();
  [[nodiscard]] double now() const { return options_.clock(); }

 private:
  void tick_native();  // node liveness, licence, the scheduler's pass
  void schedule_locked();
  // The inputs of a pass from the live indexes below, and the scheduler's
  // plan; `queued` gets the pending jobs its decisions are for, in order.
  Plan plan_locked(std::vector<Job*>& queued);
  // Keep live_jobs_ / live_tasks_ current: called after every change of a
  // job's or task's state (save_job() and save_task() do).
  void track_job_locked(Job& job);
  void track_task_locked(const Task& task);
  void save_task(const Task& task);
  // The live tasks (assigned or running) that `keep` selects, to change them
  // (changing one's state takes it out of live_tasks_, so not while iterating).
  template <typename Keep>
  std::vector<Task*> live_tasks_where(Keep keep);
  void restart_or_fail_locked(Job& job, const std::string& why, bool bad_input);
  void finish_job_if_done_locked(Job& job);
  void apply_report_locked(const std::string& node, const TaskReport& r);
  void mark_node_lost_locked(Node& node);
  std::vector<Assignment> assignments_locked(const std::string& node) const;
  Assignment assignment_for(const Task& t, const Job& j) const;
  void save_job(const Job& job);
  void wake_node(const std::string& node);
  std::filesystem::path log_path(const std::string& task_id) const;
  // The Slurm executor's side of a tick (slurm_dispatch.cpp): submit pending
  // slurm jobs, scancel cancelled ones, mirror Slurm's states. Takes mu_
  // itself and runs Slurm's commands without it.
  void sync_slurm();
  void check_slurm_submission(const JobSpec& spec) const;  // ApiError 400
  void recover_slurm_locked();
  // Devices in use against the licence's cap, one count for both executors
  // (slurm_dispatch.cpp): the agents' assigned and running tasks, and the
  // ranks of every Slurm job whose attempt is submitted and not yet ended
  // (pending in Slurm's queue too: it may start at any moment).
  struct DevicesInUse {
    int native = 0;
    int slurm = 0;
    [[nodiscard]] int total() const { return native + slurm; }
  };
  [[nodiscard]] DevicesInUse devices_in_use_locked() const;
  // Its Slurm part alone: what the native scheduler's pass adds to the
  // devices its agents' tasks hold (it counts those itself).
  [[nodiscard]] int slurm_devices_held_locked() const;
  // Slurm reported the attempt's end: the file that says so, and its devices released.
  void slurm_attempt_ended_locked(const std::string& job_id, int attempt);

  ControlOptions options_;
  Store store_;
  LicencePolicy licence_;
  mutable std::mutex mu_;
  std::condition_variable changed_;  // assignments changed (long polls wait on it)
  std::condition_variable tick_cv_;
  std::map<std::string, Job> jobs_;
  std::map<std::string, std::string> idempotency_;  // key -> job id
  std::map<std::string, Task> tasks_;
  std::map<std::string, Node> nodes_;
  // The part of jobs_ and tasks_ a scheduling pass reads, so that a pass and a
  // heartbeat cost O(live), not O(every job since the state was created):
  // native jobs that are pending or running, by seq (the kept queue's order),
  // and tasks that are assigned or running (their devices are allocated), by id.
  std::map<std::int64_t, Job*> live_jobs_;
  std::map<std::string_view, Task*> live_tasks_;
  std::map<std::string, std::uint64_t> node_generation_;  // bumped when a node's assignments change
  std::map<std::pair<std::string, int>, std::map<int, gpulab::Json>> rendezvous_;
  std::int64_t next_seq_ = 1;
  bool dirty_ = true;  // something the scheduler should look at
  Scheduler scheduler_;  // its queue is kept between passes (schedule_locked)
  double last_licence_refresh_ = 0;
  // Metrics.
  std::uint64_t submitted_total_ = 0;
  std::uint64_t task_restarts_total_ = 0;
  std::uint64_t preemptions_total_ = 0;
  std::uint64_t nodes_lost_total_ = 0;
  std::map<std::string, double> queued_since_;  // job id -> when it (re)entered the queue
  gpulab::prom::Exposition placement_;           // the placement latency histogram
  std::unique_ptr<std::thread> thread_;
  bool stopping_ = false;
  std::unique_ptr<SlurmExecutor> slurm_;
  std::set<std::string> slurm_cancel_;  // cancelled slurm jobs whose scancel has not succeeded
  double last_slurm_poll_ = 0;
  bool slurm_dirty_ = false;  // a slurm job was submitted or cancelled: sync before the next poll interval
  std::map<std::string, int> slurm_live_;  // job -> ranks of its submitted, not yet ended Slurm attempt
};

}  // namespace platform
