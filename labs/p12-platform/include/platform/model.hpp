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

struct Job {
  std::string id;  // "j-000042": sequence order is submission order
  std::int64_t seq = 0;
  JobSpec spec;
  JobState state = JobState::kPending;
  std::string reason;  // why pending/failed/cancelled, in words
  std::vector<Slot> placement;
  int attempt = 0;   // 1 on first placement; +1 per restart
  int restarts = 0;  // restarts caused by failures
  int preemptions = 0;  // times evicted for a higher-priority job (not failures)
  std::string requeued_because;  // while pending again: the restart or preemption that put it back
  std::string idempotency_key;
  double submitted_at = 0;  // Unix seconds
  double started_at = 0;    // first placement of the current attempt
  double finished_at = 0;
  gpulab::Json result = gpulab::Json::object();  // rank 0's "done" line
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
};

enum class DeviceHealth { kHealthy, kUnhealthy };

struct Device {
  std::string id;       // "<backend>:<index>"
  std::string backend;  // HAL backend name
  int index = 0;
  bool healthy = true;
  std::string health_reason;        // "Xid 79 (fell off the bus)" when unhealthy
  std::vector<std::string> dtypes;  // dtypes hal-conformance certified on this node ("f32")
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
gpulab::Json to_json(const Job& j);
gpulab::Json to_json(const Task& t);
gpulab::Json to_json(const Device& d);
gpulab::Json to_json(const Node& n, double now);
Device device_from_json(const gpulab::Json& j);  // throws SpecError naming the field

}  // namespace platform
