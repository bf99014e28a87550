// CoreDevice: fakegpu_core made thread-safe for user space. One mutex guards every
// context and the device; WAIT sleeps on a condition variable until the job's
// deadline. fakegpud serves it through FUSE; SimDevice calls it in-process.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>

#include "fakegpu_core.h"

namespace fakegpu {

fg_config default_config();

class CoreDevice {
 public:
  explicit CoreDevice(const fg_config& cfg);  // throws std::invalid_argument on a bad config
  ~CoreDevice();
  CoreDevice(const CoreDevice&) = delete;
  CoreDevice& operator=(const CoreDevice&) = delete;

  // A new context; 0 when memory is short (never a valid id).
  std::uint64_t open();
  // Frees the context and everything it holds; false for an unknown id.
  bool release(std::uint64_t id);
  // One ioctl on a context: `buf` holds fg_cmd_size(cmd) bytes (the caller copied
  // them in and copies them out). Returns 0 or -errno. A WAIT blocks here; it
  // returns -EINTR as soon as `interrupted` says so (polled at least every 20 ms
  // and whenever wake_all() is called).
  long ioctl(std::uint64_t id, unsigned int cmd, void* buf,
             const std::function<bool()>& interrupted = {});
  // Wakes blocked WAITs so they re-check `interrupted`.
  void wake_all();

  fg_stats stats();
  const fg_config& config() const { return dev_.cfg; }

 private:
  static void lock_noop(void*) {}
  std::mutex mu_;
  std::condition_variable cv_;
  fg_ops ops_{};
  fg_device dev_{};
  std::map<std::uint64_t, fg_context*> contexts_;
  std::uint64_t next_id_ = 1;
};

// Monotonic nanoseconds (CLOCK_MONOTONIC), the core's clock in user space.
std::uint64_t now_ns();

}  // namespace fakegpu
