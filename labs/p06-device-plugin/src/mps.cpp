#include "device_plugin/mps.hpp"

#include <fmt/format.h>

namespace device_plugin {

std::vector<std::string> MpsDaemon::control_commands() const {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < pinned_limit_mib.size(); ++i)
    out.push_back(
        fmt::format("set_default_device_pinned_mem_limit {} {}M", i, pinned_limit_mib[i]));
  out.push_back(fmt::format("set_default_active_thread_percentage {}", active_thread_percentage));
  return out;
}

MpsDaemon mps_daemon(const std::string& resource, const std::vector<std::uint64_t>& memory_bytes,
                     int replicas) {
  MpsDaemon d;
  d.resource = resource;
  d.pipe_dir = fmt::format("{}/{}/pipe", kMpsContainerRoot, resource);
  d.log_dir = fmt::format("{}/{}/log", kMpsContainerRoot, resource);
  d.host_pipe_dir = fmt::format("{}/{}/pipe", kMpsHostRoot, resource);
  d.host_log_dir = fmt::format("{}/{}/log", kMpsHostRoot, resource);
  d.host_shm_dir = fmt::format("{}/shm", kMpsHostRoot);
  // Integer division, as NVIDIA's daemon does: 3 replicas get 33 %, not 33.3.
  d.active_thread_percentage = 100 / replicas;
  for (const std::uint64_t m : memory_bytes)
    d.pinned_limit_mib.push_back(m / static_cast<std::uint64_t>(replicas) / 1024 / 1024);
  return d;
}

}  // namespace device_plugin
