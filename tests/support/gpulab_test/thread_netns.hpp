// Puts the calling thread into a network namespace until destroyed. The
// network namespace is per thread (setns(CLONE_NEWNET) is allowed in a
// multi-threaded process): the sockets this thread opens, and the processes it
// forks, are in `name`; the process's other threads stay where they were.
#pragma once

#include <fcntl.h>
#include <sched.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>

namespace gpulab_test {

class ThreadNetns {
 public:
  explicit ThreadNetns(const std::string& name) : home_(::open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC)) {
    const std::string path = "/run/netns/" + name;
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    const bool moved = home_ >= 0 && fd >= 0 && ::setns(fd, CLONE_NEWNET) == 0;
    const int err = errno;
    if (fd >= 0) ::close(fd);
    if (!moved) {
      if (home_ >= 0) ::close(home_);
      throw std::runtime_error("cannot enter network namespace " + path + ": " + std::strerror(err));
    }
  }
  ~ThreadNetns() {
    ::setns(home_, CLONE_NEWNET);
    ::close(home_);
  }
  ThreadNetns(const ThreadNetns&) = delete;
  ThreadNetns& operator=(const ThreadNetns&) = delete;

 private:
  int home_;
};

}  // namespace gpulab_test
