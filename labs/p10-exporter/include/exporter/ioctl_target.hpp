// The files gpulab-ioctl-latency watches (--device): each path resolved to the key the BPF
// program compares against the file behind an ioctl's fd (ebpf/ioctl_latency.h). A character
// device is its device number, so every node for it (a container's own /dev) counts; a file a
// FUSE driver serves (fakegpud's MOUNTDIR/fakegpu) is its filesystem and inode.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace exporter {

struct IoctlTarget {
  std::string path;       // as the user gave it: the `device` label and the table's column
  std::uint64_t dev = 0;  // kernel encoding (major << 20 | minor): rdev, or the filesystem's dev
  std::uint64_t ino = 0;  // the inode, or kChrdevIno for a character device
  bool chrdev = false;
};

// The most --device flags (the BPF targets map's size).
inline constexpr std::size_t kMaxIoctlTargets = 64;

// dev_t as the kernel stores it (MKDEV: 12 bits of major over 20 of minor), which is not
// glibc's encoding of st_dev.
[[nodiscard]] std::uint64_t kernel_dev(std::uint64_t user_dev);

// Resolves one --device path. Throws gpulab::UsageError naming the flag and the path when it
// does not exist, is a directory, or is neither a character device nor a file on FUSE (an
// ioctl on a plain file reaches no driver).
[[nodiscard]] IoctlTarget resolve_ioctl_target(const std::string& path);

// Every path, in order; also refuses more than kMaxIoctlTargets, none, and two paths that name
// the same file (their calls could not be told apart).
[[nodiscard]] std::vector<IoctlTarget> resolve_ioctl_targets(const std::vector<std::string>& paths);

}  // namespace exporter
