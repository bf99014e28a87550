#include "ring_allreduce/rank_netns.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sched.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace ring {

std::string netns_path(const std::string& name) {
  return name.find('/') == std::string::npos ? "/run/netns/" + name : name;
}

void enter_netns(const std::string& name) {
  const std::string path = netns_path(name);
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    throw std::runtime_error(fmt::format("network namespace '{}': {}: {}", name, path, std::strerror(errno)));
  const int rc = ::setns(fd, CLONE_NEWNET);
  const int err = errno;
  ::close(fd);
  if (rc != 0)
    throw std::runtime_error(fmt::format("network namespace '{}': setns: {}{}", name, std::strerror(err),
                                         err == EPERM ? " (entering a namespace needs root)" : ""));
}

NetnsSeat::NetnsSeat(const std::string& name) : home_(::open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC)) {
  if (home_ < 0) throw std::runtime_error(fmt::format("/proc/thread-self/ns/net: {}", std::strerror(errno)));
  try {
    enter_netns(name);
  } catch (...) {
    ::close(home_);
    throw;
  }
}

NetnsSeat::~NetnsSeat() {
  ::setns(home_, CLONE_NEWNET);  // back where we came from; cannot fail for our own namespace
  ::close(home_);
}

}  // namespace ring
