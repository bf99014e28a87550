#include "fakegpu/device.hpp"

#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <map>
#include <mutex>
#include <vector>

namespace fakegpu {

std::string errno_name(int err) {
  switch (err) {
    case 0:
      return "0";
    case EFAULT:
      return "EFAULT";
    case ENOTTY:
      return "ENOTTY";
    case EINVAL:
      return "EINVAL";
    case ENOSPC:
      return "ENOSPC";
    case ENOMEM:
      return "ENOMEM";
    case EBUSY:
      return "EBUSY";
    case EAGAIN:
      return "EAGAIN";
    case ETIMEDOUT:
      return "ETIMEDOUT";
    case EINTR:
      return "EINTR";
    case EPERM:
      return "EPERM";
    case EACCES:
      return "EACCES";
    case ENODEV:
      return "ENODEV";
    case EBADF:
      return "EBADF";
    case ENOENT:
      return "ENOENT";
    case ENXIO:
      return "ENXIO";
    case EIO:
      return "EIO";
    case ENOTCONN:
      return "ENOTCONN";
    case ENOSYS:
      return "ENOSYS";
    default:
      return "errno " + std::to_string(err);
  }
}

namespace {

class SystemDevice final : public Device {
 public:
  std::string name() const override { return "system calls"; }
  int open(const std::string& path) override {
    const int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
    return fd >= 0 ? fd : -errno;
  }
  int close(int fd) override { return ::close(fd) == 0 ? 0 : -errno; }
  int ioctl(int fd, unsigned long cmd, void* arg) override {
    return ::ioctl(fd, cmd, arg) == 0 ? 0 : -errno;
  }
  void* mmap(int fd, std::size_t len, int prot, int flags, off_t offset, int* err) override {
    void* p = ::mmap(nullptr, len, prot, flags, fd, offset);
    if (p == MAP_FAILED) {
      *err = errno;
      return nullptr;
    }
    *err = 0;
    return p;
  }
  void munmap(void* addr, std::size_t len) override { ::munmap(addr, len); }
};

// Pointers the kernel would refuse: the first page. Anything else the sim
// must trust (it cannot probe this process's mappings without syscalls).
bool bad_pointer(const void* p) {
  return reinterpret_cast<std::uintptr_t>(p) < 4096;
}

class SimDevice final : public Device {
 public:
  explicit SimDevice(const fg_config& cfg) : core_(cfg) {}
  ~SimDevice() override {
    for (auto& [fd, id] : fds_) core_.release(id);
  }
  std::string name() const override { return "in-process core"; }
  int open(const std::string&) override {
    const std::uint64_t id = core_.open();
    if (id == 0) return -ENOMEM;
    std::lock_guard lock(mu_);
    const int fd = next_fd_++;
    fds_.emplace(fd, id);
    return fd;
  }
  int close(int fd) override {
    std::uint64_t id = 0;
    {
      std::lock_guard lock(mu_);
      auto it = fds_.find(fd);
      if (it == fds_.end()) return -EBADF;
      id = it->second;
      fds_.erase(it);
    }
    core_.release(id);
    return 0;
  }
  int ioctl(int fd, unsigned long cmd, void* arg) override {
    std::uint64_t id = 0;
    {
      std::lock_guard lock(mu_);
      auto it = fds_.find(fd);
      if (it == fds_.end()) return -EBADF;
      id = it->second;
    }
    // As the kernel: decode, copy in, act, copy out.
    const long size = fg_cmd_size(static_cast<unsigned int>(cmd));
    if (size < 0 || cmd > UINT32_MAX) return -ENOTTY;
    if (bad_pointer(arg)) return -EFAULT;
    std::vector<unsigned char> buf(static_cast<std::size_t>(size));
    if ((_IOC_DIR(cmd) & _IOC_WRITE) != 0) std::memcpy(buf.data(), arg, buf.size());
    const long rc = core_.ioctl(id, static_cast<unsigned int>(cmd), buf.data());
    if (rc != 0) return static_cast<int>(rc);
    if ((_IOC_DIR(cmd) & _IOC_READ) != 0) std::memcpy(arg, buf.data(), buf.size());
    return 0;
  }
  void* mmap(int, std::size_t, int, int, off_t, int* err) override {
    *err = ENODEV;
    return nullptr;
  }
  void munmap(void*, std::size_t) override {}
  bool checks_every_pointer() const override { return false; }

 private:
  CoreDevice core_;
  std::mutex mu_;
  std::map<int, std::uint64_t> fds_;
  int next_fd_ = 3;
};

}  // namespace

std::unique_ptr<Device> make_system_device() {
  return std::make_unique<SystemDevice>();
}
std::unique_ptr<Device> make_sim_device(const fg_config& cfg) {
  return std::make_unique<SimDevice>(cfg);
}

}  // namespace fakegpu
