#include "platform/slurm_commands.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <filesystem>

#include "gpulab/errors.hpp"
#include "gpulab/json.hpp"
#include "gpulab/output_file.hpp"
#include "platform/inventory.hpp"
#include "platform/slurm_gres_conf.hpp"

namespace platform {
namespace {

// Slurm's own default node name: the short host name.
std::string short_hostname() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0) return "localhost";
  std::string h(buf);
  return h.substr(0, h.find('.'));
}

// The node line goes into a file slurm.conf names with `Include`.
constexpr const char* kNodesFile = "gpulab-nodes.conf";

}  // namespace

SlurmCommands::SlurmCommands(CLI::App& app) {
  slurm_ = app.add_subcommand("slurm", "Slurm as the engine at scale (no control plane needed).");
  slurm_->require_subcommand(1);
  gres_conf_ = slurm_->add_subcommand("gres-conf",
                                      "Render a node's gpulab inventory as Slurm's gres.conf (one "
                                      "line per device, Type = its HAL backend)\n"
                                      "and the slurm.conf node line with its GRES counts.");
  gres_conf_->add_option("--node", node_, "Slurm node name (default: this host's short name)");
  gres_conf_
      ->add_option("--devices", devices_, "auto, or BACKEND:COUNT,... as gpulabd agent --devices")
      ->capture_default_str();
  gres_conf_->add_option(
      "--device-file", device_files_,
      "DEVICE=PATH: the device file of DEVICE (repeatable; cuda devices default to "
      "/dev/nvidia<i>, HAL CPU devices have none and need one)");
  gres_conf_->add_option(
      "--node-attrs", node_attrs_,
      "slurm.conf attributes appended to the node line (\"NodeAddr=10.0.0.7 CPUs=64\")");
  gres_conf_->add_option(
      "--out", out_dir_,
      fmt::format("Write DIR/gres.conf and DIR/{} (for `Include` in slurm.conf) instead of "
                  "printing them",
                  kNodesFile));
  gres_conf_->add_option(
      "--gres-conf-out", gres_out_,
      "Write gres.conf to FILE (overrides --out's DIR/gres.conf; Slurm reads it beside "
      "slurm.conf)");
  gres_conf_->add_option(
      "--nodes-out", nodes_out_,
      fmt::format("Write the slurm.conf node line to FILE (overrides --out's DIR/{})", kNodesFile));
  gres_conf_->add_flag("--json", json_, "Print both as one JSON document");
}

std::optional<int> SlurmCommands::run() const {
  if (!gres_conf_->parsed()) return std::nullopt;
  std::map<std::string, std::string> files;
  for (const auto& item : device_files_) {
    const auto eq = item.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == item.size()) {
      throw gpulab::UsageError(fmt::format("--device-file '{}': want DEVICE=PATH", item));
    }
    files[item.substr(0, eq)] = item.substr(eq + 1);
  }
  const auto devices = devices_ == "auto" ? discover_devices() : parse_device_spec(devices_);
  const std::string node = node_.empty() ? short_hostname() : node_;
  const auto conf = render_gres_conf(node, devices, files, node_attrs_);
  const auto in_dir = [&](const char* name) {
    return out_dir_.empty() ? std::string() : (std::filesystem::path(out_dir_) / name).string();
  };
  const std::string gres_path = gres_out_.empty() ? in_dir("gres.conf") : gres_out_;
  const std::string nodes_path = nodes_out_.empty() ? in_dir(kNodesFile) : nodes_out_;
  gpulab::Json written = gpulab::Json::array();
  for (const auto& [path, text] :
       {std::pair{gres_path, conf.gres_conf}, std::pair{nodes_path, conf.node_line}}) {
    if (path.empty()) continue;
    if (auto r = gpulab::write_file(path, text); !r) throw gpulab::RunError(r.error().message);
    written.push_back(path);
  }
  if (json_) {
    gpulab::Json j{{"node", node},
                   {"devices", devices.size()},
                   {"gres_conf", conf.gres_conf},
                   {"node_line", conf.node_line}};
    if (!written.empty()) j["written"] = written;
    gpulab::print_json(j);
  } else if (!gres_path.empty() && !nodes_path.empty()) {
    fmt::print("wrote {} ({} device(s)) and {}:\n{}", gres_path, devices.size(), nodes_path,
               conf.node_line);
  } else if (!gres_path.empty()) {
    fmt::print("wrote {} ({} device(s))\n# slurm.conf\n{}", gres_path, devices.size(),
               conf.node_line);
  } else if (!nodes_path.empty()) {
    fmt::print("{}wrote {}:\n{}", conf.gres_conf, nodes_path, conf.node_line);
  } else {
    fmt::print("{}# slurm.conf\n{}", conf.gres_conf, conf.node_line);
  }
  return gpulab::kExitOk;
}

}  // namespace platform
