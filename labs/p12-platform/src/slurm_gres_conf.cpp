#include "platform/slurm_gres_conf.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "gpulab/errors.hpp"
#include "platform/inventory.hpp"
#include "platform/task_container.hpp"

namespace platform {
namespace {

// Slurm reads node names as hostlist expressions (n[1-4]) and splits on
// commas and blanks; keep to what a hostname may hold.
bool slurm_safe(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '_' || c == '.';
  });
}

}  // namespace

GresConf render_gres_conf(const std::string& node, const std::vector<Device>& devices,
                          const std::map<std::string, std::string>& device_files,
                          const std::string& node_attrs) {
  if (!slurm_safe(node)) {
    throw gpulab::UsageError(
        fmt::format("--node '{}': a Slurm node name is letters, digits, '-', '_' and '.'", node));
  }
  if (node_attrs.find_first_of("\n#") != std::string::npos) {
    throw gpulab::UsageError("--node-attrs: one line of KEY=VALUE attributes, without '#'");
  }
  if (devices.empty()) throw gpulab::UsageError("--devices: the inventory has no devices");
  for (const auto& [id, file] : device_files) {
    const bool known =
        std::any_of(devices.begin(), devices.end(), [&](const Device& d) { return d.id == id; });
    if (!known)
      throw gpulab::UsageError(
          fmt::format("--device-file '{}={}': no device {} in the inventory", id, file, id));
  }
  GresConf out;
  out.gres_conf = fmt::format(
      "# gres.conf for Slurm node {}: {} device(s) of the gpulab inventory\n"
      "# (written by gpulabctl slurm gres-conf; Type is the HAL backend)\n",
      node, devices.size());
  // Counts per type, in first-seen order, for the node line.
  std::vector<std::pair<std::string, int>> counts;
  for (const auto& d : devices) {
    std::string file;
    if (const auto it = device_files.find(d.id); it != device_files.end()) {
      file = it->second;
    } else {
      // The device's own node, as the agent would pass it into a container
      // (checked for existence there, not here: this may run on another host).
      const auto nodes = device_nodes_for(d.id, d.backend, backend_ordinal(d), {},
                                          [](const std::string&) { return true; });
      if (!nodes.empty()) file = nodes.front();
    }
    if (file.empty()) {
      throw gpulab::UsageError(
          fmt::format("{}: no device file (HAL {} devices have none); give --device-file {}=PATH",
                      d.id, d.backend, d.id));
    }
    if (file.front() != '/' || file.find_first_of(" \t\n,") != std::string::npos) {
      throw gpulab::UsageError(fmt::format(
          "--device-file {}: '{}' must be an absolute path without blanks or commas", d.id, file));
    }
    out.gres_conf += fmt::format("NodeName={} Name=gpu Type={} File={}\n", node, d.backend, file);
    const auto c = std::find_if(counts.begin(), counts.end(),
                                [&](const auto& p) { return p.first == d.backend; });
    if (c == counts.end()) {
      counts.emplace_back(d.backend, 1);
    } else {
      ++c->second;
    }
  }
  std::string gres;
  for (const auto& [type, n] : counts)
    gres += fmt::format("{}gpu:{}:{}", gres.empty() ? "" : ",", type, n);
  out.node_line = fmt::format("NodeName={} Gres={}{}{}\n", node, gres,
                              node_attrs.empty() ? "" : " ", node_attrs);
  return out;
}

}  // namespace platform
