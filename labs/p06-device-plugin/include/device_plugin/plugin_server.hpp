// The gRPC side of the plugin: one DevicePlugin server per resource name on
// its own Unix socket, registered with the kubelet's Registration service.
// gRPC headers stay in the .cpp (they are heavy); this header is plain C++.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "device_plugin/device_state.hpp"
#include "device_plugin/server_limits.hpp"

namespace device_plugin {

// "nvidia.com/mig-1g.10gb" -> "nvidia-mig-1g.10gb.sock"
std::string endpoint_for(const std::string& resource);

// Serves every resource of `state` from `socket_dir`, registers each with
// `socket_dir`/kubelet.sock once it exists, and registers again whenever the
// kubelet socket is re-created (a kubelet restart) — re-creating its own
// socket first if the restarting kubelet deleted it.
class PluginRunner {
 public:
  using Log = std::function<void(const std::string&)>;
  PluginRunner(DeviceState& state, std::string socket_dir, Log log = {}, ServerLimits limits = {});
  ~PluginRunner();
  PluginRunner(const PluginRunner&) = delete;
  PluginRunner& operator=(const PluginRunner&) = delete;

  // Binds the sockets (throws gpulab::RunError if it cannot) and starts watching for the kubelet.
  void start();
  // Stops serving and removes the socket files. Idempotent.
  void stop();
  // Successful Register calls so far (all resources).
  [[nodiscard]] int registrations() const;
  // Set when the kubelet refused a registration: the API says the plugin should then exit.
  [[nodiscard]] bool refused() const;
  [[nodiscard]] std::string refusal() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace device_plugin
