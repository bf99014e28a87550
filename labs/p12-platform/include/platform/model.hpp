// The platform's records: jobs, the tasks that run them (one per rank and
// attempt), and nodes with their devices. Plain data; the control plane owns
// the transitions and the store persists them.
//
// Job states:  pending ──place──▶ running ──all ranks exit 0──▶ succeeded
//                 ▲                  │ rank failed / node lost / device unhealthy /
//                 │                  │ preempted by a higher-priority job
//                 └──── restarts ◀───┤ (attempt+1, train resumes from its checkpoint)
//                                    └─ restarts exhausted / bad input ─▶ failed
//              any non-terminal ──cancel──▶ cancelled
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpulab/inventory/accelerator.hpp"
#include "gpulab/json.hpp"
#include "platform/job_spec.hpp"

namespace platform {

enum class JobState { kPending, kRunning, kSucceeded, kFailed, kCancelled };
std::string_view state_name(JobState s);
std::optional<JobState> parse_state(std::string_view s);
[[nodiscard]] inline bool is_terminal(JobState s) {
  return s == JobState::kSucceeded || s == JobState::kFailed || s == JobState::kCancelled;
}

// Where one rank of a job runs: a device of a node.
struct Slot {
  int rank = 0;
  std::string node;
  std::string device;  // the device id on that node ("fast:1")
  std::string backend;
};

// Why a gang sits where it does: the topo-sim cost model's estimate of one
// ring all-reduce of the job's gradients over the placement's slowest link,
// and the cheapest placement the scheduler passed over. Empty (ranks 0) for a
// job that has no ring (one rank, or not a train job).
struct TopologyEstimate {
  int ranks = 0;
  double bytes = 0;         // per all-reduce (the MLP's gradients)
  double allreduce_s = 0;   // the placement's estimated all-reduce time
  std::string bottleneck;   // the slowest link kind the ring crosses ("nvlink", "ethernet")
  int nodes = 0;
  int islands = 0;
  int considered = 0;       // feasible placements the scheduler costed
  double next_best_s = -1;  // the cheapest other one; -1 = there was none
  std::string reason;       // in words, for gpulabctl describe
};

struct Job {
  std::string id;  // "j-000042": sequence order is submission order
  std::int64_t seq = 0;
  JobSpec spec;
  JobState state = JobState::kPending;
  std::string reason;  // why pending/failed/cancelled, in words
  std::vector<Slot> placement;
  TopologyEstimate topology;  // for the current placement
  int attempt = 0;   // 1 on first placement; +1 per restart
  int restarts = 0;  // restarts caused by failures
  int preemptions = 0;  // times evicted for a higher-priority job (not failures)
  std::string requeued_because;  // while pending again: the restart or preemption that put it back
  std::string idempotency_key;
  double submitted_at = 0;  // Unix seconds
  double started_at = 0;    // first placement of the current attempt
  double finished_at = 0;
  gpulab::Json result = gpulab::Json::object();  // rank 0's "done" line
  // A serve job's server, "http://HOST:PORT", once its GET /health answered;
  // empty while it starts, after it stopped, and for other kinds.
  std::string endpoint;
};

enum class TaskState { kAssigned, kRunning, kSucceeded, kFailed, kCancelled, kLost };
std::string_view task_state_name(TaskState s);
std::optional<TaskState> parse_task_state(std::string_view s);

struct Task {
  std::string id;  // "<job>.<attempt>.<rank>"
  std::string job;
  int attempt = 0;
  int rank = 0;
  int world = 1;
  std::string node;
  std::string device;
  std::string backend;
  TaskState state = TaskState::kAssigned;
  int exit_code = -1;
  std::string message;
  std::string isolation;  // "container" or "process", as the agent ran it
  std::vector<std::string> device_nodes = {};  // host device nodes passed into its container
  std::string endpoint = {};  // a serve task's URL once healthy (what the agent reported)
};

// A device the platform offers: the shared inventory's accelerator (id
// "<backend>:<n>", node ordinal, backend, memory, island, links, health) and,
// beside it, what only the platform knows: the dtypes hal-conformance
// certified its backend for on this node ("f32").
struct Device : gpulab::inventory::Accelerator {
  std::vector<std::string> dtypes;
  bool operator==(const Device&) const = default;
};

enum class NodeState { kReady, kDraining, kLost };
std::string_view node_state_name(NodeState s);

struct Node {
  std::string name;
  std::string address;  // the agent's HTTP endpoint (metrics, faults)
  std::vector<Device> devices;
  NodeState state = NodeState::kReady;
  bool draining = false;  // set by an operator; survives re-registration
  double last_heartbeat = 0;  // Unix seconds
  int protocol = 0;
  std::string isolation;  // what this agent can run tasks in
};

gpulab::Json to_json(const Slot& s);
gpulab::Json to_json(const TopologyEstimate& t);  // {} when ranks == 0
TopologyEstimate topology_from_json(const gpulab::Json& j);
gpulab::Json to_json(const Job& j);
gpulab::Json to_json(const Task& t);
// The inventory's accelerator JSON (gpulab/inventory/inventory_json.hpp) plus
// "dtypes", and "healthy" / "health_reason" as protocol 1 wrote them (derived
// from "health"; readers ignore them).
gpulab::Json to_json(const Device& d);
gpulab::Json to_json(const Node& n, double now);
// A node's devices from that JSON, validated together as one node inventory
// (unique ids and ordinals, links to devices that exist). Throws SpecError
// naming the field: "devices[1].memory_bytes: ...".
std::vector<Device> devices_from_json(const gpulab::Json& devices, const std::string& node);
// A device as schema 1 of the state database stored it ({id, backend, index,
// healthy, health_reason, dtypes}); `ordinal` is its place on its node.
Device device_from_v1_json(const gpulab::Json& j, int ordinal);
// A whole node's devices in that form (a schema 1 row, a protocol 1 agent),
// linked as one node.
std::vector<Device> devices_from_v1_json(const gpulab::Json& devices);

}  // namespace platform
