// What the plugin knows, without any gRPC: the devices each resource name
// advertises in a sharing mode, their health, what has been handed out, and
// what a container must receive to reach them. The gRPC servers and the
// tests both drive this class; it is thread-safe.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "device_plugin/mig.hpp"
#include "device_plugin/mps.hpp"
#include "device_plugin/node_config.hpp"
#include "gpulab/inventory/node_inventory.hpp"

namespace device_plugin {

// kMps: each GPU is advertised as mps_replicas replicas ("GPU-0::2", as for
// time-slicing) whose clients share one MPS server, like NVIDIA's
// `sharing.mps`: the pod gets the server's pipe directory and its share of
// the GPU's threads and pinned memory (mps.hpp).
enum class Mode { kWhole, kTimeslice, kMig, kMps };
std::string_view mode_name(Mode m);
Mode parse_mode(std::string_view name);  // throws gpulab::UsageError

// Constants of the v1beta1 API (constants.go).
inline constexpr std::string_view kApiVersion = "v1beta1";
inline constexpr std::string_view kHealthy = "Healthy";
inline constexpr std::string_view kUnhealthy = "Unhealthy";
inline constexpr std::string_view kDevicePluginPath = "/var/lib/kubelet/device-plugins/";
inline constexpr std::string_view kKubeletSocket = "kubelet.sock";

// A refusal, with the gRPC status code it maps to.
enum class ErrorCode { kInvalidArgument, kNotFound, kAlreadyExists, kFailedPrecondition };
struct DeviceError : std::runtime_error {
  DeviceError(ErrorCode c, const std::string& what) : std::runtime_error(what), code(c) {}
  ErrorCode code;
};

struct Device {
  std::string id;
  bool healthy = true;
  int gpu = 0;        // physical GPU index
  int numa_node = -1;  // -1: not known (ListAndWatch sends no topology)
};

struct DeviceNodeSpec {
  std::string container_path, host_path, permissions;
};
struct MountSpec {
  std::string container_path, host_path;
  bool read_only = true;
};
struct ContainerAllocation {
  std::map<std::string, std::string> envs;
  std::vector<DeviceNodeSpec> devices;
  std::vector<MountSpec> mounts;
};

class DeviceState {
 public:
  DeviceState(NodeConfig cfg, Mode mode);

  [[nodiscard]] Mode mode() const { return mode_; }
  [[nodiscard]] const NodeConfig& config() const { return cfg_; }
  // The resource names this node advertises ("nvidia.com/gpu", "nvidia.com/mig-1g.10gb", ...).
  [[nodiscard]] std::vector<std::string> resources() const;
  // What ListAndWatch sends for `resource` now.
  [[nodiscard]] std::vector<Device> list(std::string_view resource) const;
  // Allocate for one pod's containers, all or nothing. Throws DeviceError.
  std::vector<ContainerAllocation> allocate(std::string_view resource,
                                            const std::vector<std::vector<std::string>>& containers);
  // GetPreferredAllocation: NVLink pairs first, must-include honoured. Throws DeviceError.
  [[nodiscard]] std::vector<std::string> preferred(std::string_view resource,
                                                   const std::vector<std::string>& available,
                                                   const std::vector<std::string>& must_include,
                                                   int size) const;
  // Forget an allocation (the pod is gone). False if `id` was not allocated.
  bool release(const std::string& id);

  // Health (an Xid on a physical GPU marks every device on it Unhealthy). The
  // control channel injects faults on purpose, so every code counts, even the
  // application Xids gpulab::inventory::xid_marks_unhealthy() lets pass.
  bool mark_unhealthy(int gpu, int xid);
  bool mark_healthy(int gpu);
  // Health per device as an inventory reports it (--inventory: the agent's
  // own verdicts, reasons included). True when anything changed.
  bool set_health(const std::vector<gpulab::inventory::Health>& health);

  // The node as the shared inventory: each GPU with its health now and the
  // partitions that exist in this mode (time-slice replicas, MIG instances;
  // with dynamic MIG, those created so far). What a node agent reports upstream.
  [[nodiscard]] gpulab::inventory::NodeInventory inventory() const;

  // Changes bump the generation; ListAndWatch streams wait on it.
  [[nodiscard]] std::uint64_t generation() const;
  // True if the generation moved past `seen` within `timeout`.
  bool wait_for_change(std::uint64_t seen, std::chrono::milliseconds timeout) const;

  // The allocation-vs-isolation caveat for this mode.
  [[nodiscard]] std::string isolation() const;
  // Replicas per GPU in the shared modes (time-slicing, MPS); 1 otherwise.
  [[nodiscard]] int replicas() const;
  // The MPS control daemon this node's GPUs would run (mode mps), with the
  // limits each client gets.
  [[nodiscard]] MpsDaemon mps() const;
  // gpu-feature-discovery's node labels.
  [[nodiscard]] std::map<std::string, std::string> feature_labels() const;

 private:
  struct Parsed {
    int gpu = -1;
    int replica = -1;           // timeslice
    const MigProfile* profile = nullptr;  // mig
    int start = -1;             // mig instance start slice
  };
  [[nodiscard]] Parsed parse_id(std::string_view resource, const std::string& id) const;
  [[nodiscard]] std::string resource_of_profile(std::string_view profile) const;
  [[nodiscard]] std::vector<Device> list_locked(std::string_view resource) const;
  [[nodiscard]] bool is_resource(std::string_view resource) const;
  // The resource a device is advertised under.
  [[nodiscard]] std::string resource_of_gpu(const gpulab::inventory::Accelerator& g) const;
  void bump();

  NodeConfig cfg_;
  Mode mode_;
  mutable std::mutex mu_;
  mutable std::condition_variable changed_;
  std::uint64_t generation_ = 0;
  std::vector<gpulab::inventory::Health> health_;  // per GPU
  std::set<std::string> allocated_;
  std::vector<MigGpu> mig_;              // dynamic MIG: instances created so far
};

// "GPU-0::3" -> {"GPU-0", 3}; replica -1 when the ID has no "::".
std::pair<std::string, int> split_replica_id(std::string_view id);

}  // namespace device_plugin
