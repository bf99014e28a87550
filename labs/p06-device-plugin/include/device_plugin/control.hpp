// Out-of-band inputs of a running plugin: a control file it tails for
// injected faults (an Xid marks a GPU unhealthy, as the NVML event loop of
// NVIDIA's plugin does) and the node-feature file it writes for
// node-feature-discovery.
#pragma once

#include <functional>
#include <map>
#include <string>

#include "device_plugin/device_state.hpp"

namespace device_plugin {

// Applies the complete lines of `text` after `offset` and advances it.
// Commands: "xid <gpu> <code>", "recover <gpu>", "release <device-id>";
// '#' comments and blank lines are ignored. Returns one message per line
// (applied or rejected) through `log`.
void apply_control(DeviceState& state, const std::string& text, std::size_t& offset,
                   const std::function<void(const std::string&)>& log);

// Writes "key=value" lines atomically (gpulab::write_file: a dot temp file,
// which features.d readers skip, fsync, rename), the format of
// node-feature-discovery's features.d directory. Throws gpulab::RunError and
// leaves the previous file intact when the write fails.
void write_feature_file(const std::string& path, const std::map<std::string, std::string>& labels);

}  // namespace device_plugin
