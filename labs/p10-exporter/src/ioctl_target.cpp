#include "exporter/ioctl_target.hpp"

#include <fmt/format.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>

#include <cerrno>
#include <cstring>

#include "gpulab/errors.hpp"
#include "ioctl_latency.h"

namespace exporter {

namespace {

constexpr long kFuseSuperMagic = 0x65735546;  // linux/magic.h FUSE_SUPER_MAGIC

[[noreturn]] void refuse(const std::string& path, const std::string& why) {
  throw gpulab::UsageError(fmt::format("--device: '{}' {}", path, why));
}

}  // namespace

std::uint64_t kernel_dev(std::uint64_t user_dev) {
  return (static_cast<std::uint64_t>(major(user_dev)) << 20) | minor(user_dev);
}

IoctlTarget resolve_ioctl_target(const std::string& path) {
  if (path.empty()) refuse(path, "is empty: give a device file");
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    throw gpulab::UsageError(fmt::format("--device: '{}': {}", path, std::strerror(errno)));
  IoctlTarget t;
  t.path = path;
  if (S_ISCHR(st.st_mode)) {
    t.chrdev = true;
    t.dev = kernel_dev(st.st_rdev);
    t.ino = IOCTL_LATENCY_CHRDEV_INO;
    return t;
  }
  if (S_ISDIR(st.st_mode)) refuse(path, "is a directory, not a device file");
  if (!S_ISREG(st.st_mode)) refuse(path, "is not a character device");
  struct statfs fs {};
  if (::statfs(path.c_str(), &fs) != 0)
    throw gpulab::UsageError(fmt::format("--device: '{}': {}", path, std::strerror(errno)));
  if (fs.f_type != kFuseSuperMagic) {
    refuse(path,
           "is a plain file, not a device: give a character device (/dev/nvidia0) or a file a "
           "FUSE driver serves (fakegpud's MOUNTDIR/fakegpu)");
  }
  t.dev = kernel_dev(st.st_dev);
  t.ino = st.st_ino;
  return t;
}

std::vector<IoctlTarget> resolve_ioctl_targets(const std::vector<std::string>& paths) {
  if (paths.empty()) throw gpulab::UsageError("--device: give at least one device file");
  if (paths.size() > kMaxIoctlTargets) {
    throw gpulab::UsageError(
        fmt::format("--device: at most {} device files, got {}", kMaxIoctlTargets, paths.size()));
  }
  std::vector<IoctlTarget> out;
  for (const auto& p : paths) {
    IoctlTarget t = resolve_ioctl_target(p);
    for (const auto& seen : out) {
      if (seen.dev == t.dev && seen.ino == t.ino) {
        throw gpulab::UsageError(
            fmt::format("--device: '{}' and '{}' are the same file", seen.path, t.path));
      }
    }
    out.push_back(std::move(t));
  }
  return out;
}

}  // namespace exporter
