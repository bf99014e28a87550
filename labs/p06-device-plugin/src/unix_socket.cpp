#include "device_plugin/unix_socket.hpp"

#include <fmt/format.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>

#include "gpulab/errors.hpp"

namespace device_plugin {

bool socket_is_live(const std::string& path) {
  sockaddr_un addr{};
  if (path.size() >= sizeof addr.sun_path) return false;
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  // A listening socket accepts even when its server is slow to answer (the backlog);
  // a stale file refuses (ECONNREFUSED), a missing one is ENOENT.
  const bool live = ::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0;
  ::close(fd);
  return live;
}

void claim_socket_path(const std::string& path, const std::string& who) {
  if (socket_is_live(path)) {
    throw gpulab::RunError(
        fmt::format("{} is in use: another process serves on it ({}); stop that one first", path, who));
  }
  ::unlink(path.c_str());  // a stale socket from a crashed run would block bind()
}

}  // namespace device_plugin
