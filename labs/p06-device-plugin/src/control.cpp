#include "device_plugin/control.hpp"

#include <fmt/format.h>

#include <sstream>

#include "gpulab/errors.hpp"
#include "gpulab/output_file.hpp"

namespace device_plugin {

void apply_control(DeviceState& state, const std::string& text, std::size_t& offset,
                   const std::function<void(const std::string&)>& log) {
  if (offset > text.size()) offset = 0;  // the file was truncated: start over
  for (;;) {
    const std::size_t nl = text.find('\n', offset);
    if (nl == std::string::npos) return;  // a partial line waits for its newline
    const std::string line = text.substr(offset, nl - offset);
    offset = nl + 1;
    std::istringstream in(line);
    std::string cmd;
    if (!(in >> cmd) || cmd.front() == '#') continue;
    int gpu = -1, xid = 0;
    std::string id;
    if (cmd == "xid" && in >> gpu >> xid) {
      log(state.mark_unhealthy(gpu, xid) ? fmt::format("GPU {} unhealthy (Xid {})", gpu, xid)
                                         : fmt::format("control: no GPU {}", gpu));
    } else if (cmd == "recover" && in >> gpu) {
      log(state.mark_healthy(gpu) ? fmt::format("GPU {} healthy again", gpu) : fmt::format("control: no GPU {}", gpu));
    } else if (cmd == "release" && in >> id) {
      log(state.release(id) ? fmt::format("released {}", id) : fmt::format("control: {} was not allocated", id));
    } else {
      log(fmt::format("control: ignored '{}' (use: xid <gpu> <code> | recover <gpu> | release <id>)", line));
    }
  }
}

void write_feature_file(const std::string& path, const std::map<std::string, std::string>& labels) {
  std::string text;
  for (const auto& [k, v] : labels) text += k + '=' + v + '\n';
  // Atomic: a full disk leaves the previous labels, not an empty file, for the node agent.
  if (auto written = gpulab::write_file(path, text); !written) {
    throw gpulab::RunError(fmt::format("--feature-file: {}", written.error().message));
  }
}

}  // namespace device_plugin
