// The seam between the fakegpu clients and a device: the real system calls
// (the kernel module's /dev/fakegpu or fakegpud's FUSE file) or the core in-process.
// Every call returns 0 / a value, or -errno, like the kernel does.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <memory>
#include <string>

#include "fakegpu/core_device.hpp"

namespace fakegpu {

class Device {
 public:
  virtual ~Device() = default;
  virtual std::string name() const = 0;
  virtual int open(const std::string& path) = 0;                // fd >= 0, or -errno
  virtual int close(int fd) = 0;                                // 0 or -errno
  virtual int ioctl(int fd, unsigned long cmd, void* arg) = 0;  // 0 or -errno
  // The fence page; nullptr with *err = errno on failure.
  virtual void* mmap(int fd, std::size_t len, int prot, int flags, off_t offset, int* err) = 0;
  virtual void munmap(void* addr, std::size_t len) = 0;
  // True when every unusable argument pointer gives EFAULT (the kernel checks
  // them); the in-process device can only recognise the first page.
  virtual bool checks_every_pointer() const { return true; }
};

// open(2), ioctl(2), mmap(2) on a path: the kernel module or fakegpud.
std::unique_ptr<Device> make_system_device();

// fakegpu_core in this process, behind fd-like numbers. EFAULT is emulated for
// argument pointers in the first page (NULL, (void*)1); the fence page is not
// offered (mmap → ENODEV), as through FUSE.
std::unique_ptr<Device> make_sim_device(const fg_config& cfg);

// "EINVAL", "ENOSPC", ... ("0" for 0; "errno N" for the rest).
std::string errno_name(int err);

}  // namespace fakegpu
