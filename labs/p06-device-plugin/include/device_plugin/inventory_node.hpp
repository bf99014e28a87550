// --inventory FILE: the node as the platform's agent reports it
// (`gpulabd agent --inventory-out`, the shared inventory's JSON form), served
// as whole HAL devices: one resource per backend ("gpulab.dev/cuda",
// "gpulab.dev/fast"; a backend is what a pod's workload is built for, as a
// Slurm GRES type is), one device per accelerator with its id ("cuda:1"), its
// health and its NUMA node where the inventory knows it. Allocate gives what
// the agent gives a task on that device (gpulab/inventory/device_access.hpp):
// the backend's visible-devices variable and its device files.
//
// The agent rewrites the file when a device's health changes; the plugin
// reads it again (InventoryWatch) and ListAndWatch re-sends. A device added or
// removed needs a plugin restart (the kubelet learns a changed device list
// from a new registration anyway).
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "device_plugin/device_state.hpp"
#include "device_plugin/node_config.hpp"
#include "gpulab/inventory/node_inventory.hpp"

namespace device_plugin {

inline constexpr std::string_view kInventoryResourceDomain = "gpulab.dev";
// More devices than any node holds: a count past this is a broken file.
inline constexpr std::size_t kMaxInventoryDevices = 256;
// A node's inventory is a few KiB per device.
inline constexpr std::size_t kMaxInventoryBytes = std::size_t{16} << 20;

// "gpulab.dev/<backend>".
std::string inventory_resource(std::string_view backend);

// The node config that serves `inv`: checked (at least one device, at most
// kMaxInventoryDevices, each accelerator's index its place in the list, the
// shared model's validate()), ids usable as kubelet device ids. Throws
// gpulab::UsageError "<source>: <field>: <what>".
NodeConfig node_config_from_inventory(gpulab::inventory::NodeInventory inv,
                                      const std::string& source);
// Reads and parses FILE (gpulab::read_text_file with kMaxInventoryBytes).
// Throws gpulab::UsageError naming the file.
NodeConfig load_inventory_node(const std::string& path);

// Follows the inventory file of a running plugin: when it changed (inode,
// size or modification time), reads it again and applies each device's
// health; a file that no longer parses or lists other devices is reported
// through `log` once per change and otherwise ignored (the last good health
// stays advertised).
class InventoryWatch {
 public:
  using Log = std::function<void(const std::string&)>;
  InventoryWatch(std::string path, Log log);
  // Returns true when it applied a change of health.
  bool poll(DeviceState& state);

 private:
  struct Stamp {
    unsigned long long ino = 0, size = 0;
    long long mtime_ns = 0;
    bool operator==(const Stamp&) const = default;
  };
  std::optional<Stamp> stamp() const;
  std::string path_;
  Log log_;
  std::optional<Stamp> seen_;
};

}  // namespace device_plugin
