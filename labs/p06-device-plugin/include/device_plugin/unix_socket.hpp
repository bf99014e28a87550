// Taking a Unix socket path to serve on. A socket file left by a crashed run
// must go (bind() fails on it), but one a live server listens on must not: a
// second gpu-device-plugin (or mock kubelet) used to unlink it and bind its
// own, silently taking over new connections while the first kept running.
// The Unix-socket form of "a second server on a taken port refuses to start".
#pragma once

#include <string>

namespace device_plugin {

// True when a server accepts connections on `path` right now.
bool socket_is_live(const std::string& path);

// Removes a stale socket file at `path`; gpulab::RunError naming `path` and
// `who` ("a second gpu-device-plugin?") when a live server holds it.
void claim_socket_path(const std::string& path, const std::string& who);

}  // namespace device_plugin
