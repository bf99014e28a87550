// A task inside a mininer container (P04's library): its own PID, mount, UTS
// and IPC namespaces, a devices cgroup that admits only the nodes of the
// task's assigned device, and a root built from the host's own userland —
// /usr and /etc read-only, the task program's folder read-only, the job's
// checkpoint folder writable, a fresh /tmp. The network namespace stays the
// agent's: ranks meet at the control plane's rendezvous URL and run the ring
// all-reduce between each other on the agent's address (loopback here), which
// a namespace of their own would hide.
//
// The agent decides once whether it can do this (root, the namespaces, a
// cgroup hierarchy for the device rules, and a probe container that really
// starts); the plan is pure data, written as JSON beside the task's log, and
// gpulab-shim runs it: the shim is the container's runtime process (like
// containerd's shim + runc), so the agent never forks into namespaces itself.
#pragma once

#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpulab/json.hpp"
#include "mininer/device_rule.hpp"

namespace platform {

enum class IsolationMode { kAuto, kContainer, kProcess };
// "auto", "container", "process"; throws gpulab::UsageError naming --isolation.
IsolationMode parse_isolation_mode(std::string_view text);

struct IsolationDecision {
  std::string isolation;  // "container" or "process": what Node/Task JSON say
  std::string reason;     // one line for the agent's log
};
// `missing` is why containers cannot run here (nullopt: they can). Throws
// gpulab::RunError when kContainer was asked for and `missing` says why not.
IsolationDecision decide_isolation(IsolationMode mode, const std::optional<std::string>& missing);

// What containers need that this host lacks, checked without starting one:
// root, /proc/self/ns/{pid,mnt,uts,ipc}, a cgroup hierarchy for the device
// rules (v1 devices, or cgroup2 for the eBPF program). nullopt: all there.
std::optional<std::string> container_prerequisites_missing();

// The host device nodes that belong to one device: a cuda device gets
// /dev/nvidia<index> and the shared control nodes (nvidiactl, nvidia-uvm,
// nvidia-uvm-tools), a fakegpu device /dev/fakegpu, each only where it
// exists; `declared` (the agent's --device-node DEVICE=PATH) adds nodes for
// any device. HAL CPU backends (cpu_ref, fast, blas, PoCL's opencl) have no
// node: their tasks get the standard set only.
std::vector<std::string> device_nodes_for(const std::string& device_id, const std::string& backend, int index,
                                          const std::map<std::string, std::vector<std::string>>& declared,
                                          const std::function<bool(const std::string&)>& exists);

// The devices cgroup's allow-list for a task with these nodes: the standard
// nodes every container's /dev holds (null, zero, full, random, urandom, tty)
// and the nodes' own rules. Throws gpulab::UsageError for a path that is not a
// device node.
std::vector<mininer::DeviceRule> device_rules_for(const std::vector<std::string>& nodes);

// How the host's top level looks: a merged-/usr host has /bin -> usr/bin.
struct TopEntry {
  std::string path;    // "/bin"
  std::string link;    // "usr/bin" when a symlink, else ""
  bool is_dir = false;
};
// lstat of /usr /etc /bin /sbin /lib /lib32 /lib64 /libx32 /opt; absent ones left out.
std::vector<TopEntry> read_host_layout();

struct BindMount {
  std::string host;
  std::string path;  // inside
  bool read_only = true;
  bool operator==(const BindMount&) const = default;
};

struct ContainerPlan {
  std::string rootfs;    // an empty directory; a tmpfs is mounted on it inside
  std::string hostname;  // the task id
  std::vector<std::pair<std::string, std::string>> links;  // {target, path}
  std::vector<std::string> tmpfs;
  std::vector<BindMount> binds;
  std::vector<std::string> devices;  // host nodes, passed under their own /dev name
  std::vector<std::string> env;      // NAME=value
  std::vector<std::string> argv;     // argv[0] is the absolute program path
};

struct TaskLaunch {
  std::string task_id;
  std::filesystem::path program;  // absolute, symlinks resolved
  std::vector<std::string> args;
  std::vector<std::string> device_nodes;
  std::vector<std::string> env;  // NAME=value
  std::filesystem::path rootfs;
  std::vector<std::filesystem::path> read_only;  // more host folders to see (the HAL's backend folder)
};

// The mount plan: the host's top level (links as links, directories bound
// read-only), then the program's folder and `read_only` unless already
// visible, then writable binds of the folders the task writes (the values of
// --checkpoint-dir and --rendezvous-dir), a fresh /tmp and /dev/shm, and HOME=/tmp.
// A `read_only` entry may be a file (bound alone, its folders made in the tmpfs).
ContainerPlan plan_task_container(const TaskLaunch& launch, const std::vector<TopEntry>& layout);

gpulab::Json to_json(const ContainerPlan& p);
// Throws gpulab::UsageError naming the field.
ContainerPlan container_plan_from_json(const gpulab::Json& j);

// The agent's environment variables a container keeps (the rest is dropped):
// HAL and backend settings (GPULAB_*, POCL_*, OCL_*, CUDA_*, OPENBLAS_*,
// OMP_*), sanitizer options, locale and TZ.
bool passes_into_container(std::string_view name);

// Host files that options in the environment name (a sanitizer's
// `suppressions=/path` in TSAN_OPTIONS, say): a container must see them, or the
// sanitized task cannot start. Absolute paths only; `exists` filters.
std::vector<std::string> files_named_in(const std::vector<std::string>& env,
                                        const std::function<bool(const std::string&)>& exists);

// gpulab-shim's work: runs the plan with mininer::run_container (mininer's own
// lines go to stderr, the task's output to the inherited stdout/stderr) and
// returns the task's exit code; a task killed by a signal is re-raised on the
// shim, so the agent sees the signal as it would for a plain process.
int run_container_plan(const ContainerPlan& plan);

}  // namespace platform
