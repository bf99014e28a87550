#include "device_plugin/inventory_node.hpp"

#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>

#include "gpulab/errors.hpp"
#include "gpulab/file.hpp"
#include "gpulab/inventory/device_access.hpp"
#include "gpulab/inventory/inventory_json.hpp"

namespace device_plugin {

namespace inv = gpulab::inventory;

std::string inventory_resource(std::string_view backend) {
  return fmt::format("{}/{}", kInventoryResourceDomain, backend);
}

NodeConfig node_config_from_inventory(inv::NodeInventory node, const std::string& source) {
  const auto bad = [&](const std::string& what) {
    throw gpulab::UsageError(fmt::format("{}: {}", source, what));
  };
  if (node.accelerators.empty()) bad("accelerators: the node has no devices to advertise");
  if (node.accelerators.size() > kMaxInventoryDevices)
    bad(fmt::format("accelerators: {} devices, more than the {} a node may have",
                    node.accelerators.size(), kMaxInventoryDevices));
  for (std::size_t i = 0; i < node.accelerators.size(); ++i) {
    // DeviceState keeps health per place in the list; the agent writes index = place.
    if (node.accelerators[i].index != static_cast<int>(i))
      bad(fmt::format("accelerators[{}].index: must be {} (its place in the list), got {}", i, i,
                      node.accelerators[i].index));
  }
  if (const auto problems = inv::validate(node); !problems.empty()) bad(problems.front());
  NodeConfig cfg;
  cfg.from_inventory = true;
  for (const inv::Accelerator& a : node.accelerators) {
    // The device's own node, as the agent passes it into a task's container.
    const auto files = inv::device_files(a.backend, inv::backend_ordinal(a.id));
    const std::string own = files.empty() ? "" : files.front();
    cfg.paths.push_back({own, own});
  }
  cfg.inventory = std::move(node);
  return cfg;
}

NodeConfig load_inventory_node(const std::string& path) {
  const std::string text = gpulab::read_input_file(path, kMaxInventoryBytes);
  auto parsed = inv::parse_node_inventory(text);
  if (!parsed) throw gpulab::UsageError(fmt::format("{}: {}", path, parsed.error().message));
  return node_config_from_inventory(std::move(parsed).value(), path);
}

InventoryWatch::InventoryWatch(std::string path, Log log)
    : path_(std::move(path)), log_(std::move(log)) {
  seen_ = stamp();  // the plugin has just loaded this version
}

std::optional<InventoryWatch::Stamp> InventoryWatch::stamp() const {
  struct stat st {};
  if (::stat(path_.c_str(), &st) != 0) return std::nullopt;
  return Stamp{static_cast<unsigned long long>(st.st_ino),
               static_cast<unsigned long long>(st.st_size),
               static_cast<long long>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec};
}

bool InventoryWatch::poll(DeviceState& state) {
  const auto now = stamp();
  if (now == seen_) return false;
  seen_ = now;
  const auto say = [&](const std::string& s) {
    if (log_) log_(s);
  };
  if (!now) {
    say(fmt::format("{}: gone; advertising the last health read", path_));
    return false;
  }
  NodeConfig fresh;
  try {
    fresh = load_inventory_node(path_);
  } catch (const gpulab::UsageError& e) {
    say(fmt::format("{}; advertising the last health read", e.what()));
    return false;
  }
  const auto& had = state.config().inventory.accelerators;
  const auto& has = fresh.inventory.accelerators;
  const bool same_devices = std::equal(had.begin(), had.end(), has.begin(), has.end(),
                                       [](const inv::Accelerator& a, const inv::Accelerator& b) {
                                         return a.id == b.id && a.backend == b.backend;
                                       });
  if (!same_devices) {
    say(fmt::format("{}: the node's devices changed; restart the plugin to advertise them", path_));
    return false;
  }
  std::vector<inv::Health> health;
  for (const auto& a : has) health.push_back(a.health);
  const bool changed = state.set_health(health);
  if (changed) say(fmt::format("{}: device health changed", path_));
  return changed;
}

}  // namespace device_plugin
