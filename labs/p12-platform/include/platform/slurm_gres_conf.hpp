// A node's gpulab inventory as Slurm configuration: the gres.conf lines that
// bind each device to its device file (one line per device, Type = its HAL
// backend, so `--gpus-per-task=fast:1` asks for a device the fast backend
// drives) and the slurm.conf node line that declares the counts
// (`NodeName=n1 Gres=gpu:cpu_ref:2,gpu:fast:1`). What `gpulabctl slurm
// gres-conf` prints and writes, and what the Slurm tests' slurmd reads.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "platform/model.hpp"

namespace platform {

struct GresConf {
  std::string gres_conf;  // the whole gres.conf
  std::string node_line;  // one slurm.conf line, newline-terminated
};

// `device_files` maps a device id ("cpu_ref:0") to its device file; a device
// without one gets the node the agent would pass into its container
// (/dev/nvidia<i> for cuda). Slurm sets CUDA_VISIBLE_DEVICES from the File=
// order, so every device needs a file: a HAL CPU device without one, a
// node name Slurm would misread, no devices, or a file for a device the
// inventory lacks is a gpulab::UsageError naming it.
// `node_attrs` ("NodeAddr=10.0.0.7 CPUs=64") is appended to the node line:
// the site's own attributes, which the inventory does not know.
GresConf render_gres_conf(const std::string& node, const std::vector<Device>& devices,
                          const std::map<std::string, std::string>& device_files,
                          const std::string& node_attrs = {});

}  // namespace platform
