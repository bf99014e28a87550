#include "membench/perf_counters.hpp"

#include <fmt/core.h>
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace membench {
namespace {

int open_counter(std::uint64_t config, int group_fd) {
  perf_event_attr attr{};
  attr.size = sizeof attr;
  attr.type = PERF_TYPE_HARDWARE;
  attr.config = config;
  if (group_fd < 0) attr.disabled = 1;  // the group leader starts disabled; members follow it
  attr.exclude_kernel = 1;
  attr.exclude_hv = 1;
  return static_cast<int>(syscall(SYS_perf_event_open, &attr, 0, -1, group_fd, 0));
}

std::uint64_t read_counter(int fd) {
  std::uint64_t v = 0;
  if (read(fd, &v, sizeof v) != static_cast<ssize_t>(sizeof v)) return 0;
  return v;
}

}  // namespace

CacheCounters::CacheCounters() {
  refs_fd_ = open_counter(PERF_COUNT_HW_CACHE_REFERENCES, -1);
  if (refs_fd_ < 0) {
    reason_ = fmt::format("perf_event_open(cache-references): {}{}", std::strerror(errno),
                          errno == ENOENT || errno == EOPNOTSUPP ? " (no hardware counters: a VM?)"
                          : errno == EACCES || errno == EPERM
                              ? " (see /proc/sys/kernel/perf_event_paranoid)"
                              : "");
    return;
  }
  misses_fd_ = open_counter(PERF_COUNT_HW_CACHE_MISSES, refs_fd_);
  if (misses_fd_ < 0) {
    reason_ = fmt::format("perf_event_open(cache-misses): {}", std::strerror(errno));
    close(refs_fd_);
    refs_fd_ = -1;
  }
}

CacheCounters::~CacheCounters() {
  if (misses_fd_ >= 0) close(misses_fd_);
  if (refs_fd_ >= 0) close(refs_fd_);
}

void CacheCounters::start() {
  if (!available()) return;
  ioctl(refs_fd_, PERF_EVENT_IOC_RESET, PERF_IOC_FLAG_GROUP);
  ioctl(refs_fd_, PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP);
}

CacheCounters::Counts CacheCounters::stop() {
  if (!available()) return {};
  ioctl(refs_fd_, PERF_EVENT_IOC_DISABLE, PERF_IOC_FLAG_GROUP);
  return {read_counter(refs_fd_), read_counter(misses_fd_)};
}

}  // namespace membench
