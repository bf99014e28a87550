// The five commands as calls on a Device: fill the struct, ioctl, unpack the
// answer. Returns 0 or -errno; outputs are zero when the call failed. Shared by
// the client checks and the evil cases.
#pragma once

#include <cstdint>

#include "fakegpu/device.hpp"

namespace fakegpu {

class Ioctls {
 public:
  explicit Ioctls(Device& dev) : dev_(dev) {}

  int info(int fd, fakegpu_info* out) {
    *out = fakegpu_info{};
    return dev_.ioctl(fd, FAKEGPU_IOC_INFO, out);
  }
  int alloc(int fd, std::uint64_t size, std::uint32_t* handle, std::uint32_t flags = 0) {
    fakegpu_alloc a{};
    a.size = size;
    a.flags = flags;
    const int rc = dev_.ioctl(fd, FAKEGPU_IOC_ALLOC, &a);
    *handle = rc == 0 ? a.handle : 0;
    return rc;
  }
  int free_(int fd, std::uint32_t handle, std::uint32_t flags = 0) {
    fakegpu_free f{};
    f.handle = handle;
    f.flags = flags;
    return dev_.ioctl(fd, FAKEGPU_IOC_FREE, &f);
  }
  int submit(int fd, std::uint32_t handle, std::uint64_t* seq, std::uint32_t flags = 0) {
    fakegpu_submit s{};
    s.handle = handle;
    s.flags = flags;
    const int rc = dev_.ioctl(fd, FAKEGPU_IOC_SUBMIT, &s);
    *seq = rc == 0 ? s.seqno : 0;
    return rc;
  }
  int wait(int fd, std::uint64_t seq, std::uint32_t timeout_ms = 0, std::uint32_t flags = 0) {
    fakegpu_wait w{};
    w.seqno = seq;
    w.timeout_ms = timeout_ms;
    w.flags = flags;
    return dev_.ioctl(fd, FAKEGPU_IOC_WAIT, &w);
  }

 protected:
  Device& dev_;
};

}  // namespace fakegpu
