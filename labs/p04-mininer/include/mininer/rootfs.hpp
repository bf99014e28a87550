// `mininer mkrootfs DIR`: a busybox root filesystem from Debian's
// busybox-static (no download), with /proc, /sys, /dev/null, /tmp and the
// static `hog` when it sits next to mininer.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace mininer {

struct RootfsReport {
  std::string busybox_path;
  std::string busybox_version;  // "1.35.0"
  std::size_t applets = 0;
  std::vector<std::string> extras;  // "/hog", "/dev/null", ...
  std::vector<std::string> notes;   // what could not be done and why
};

// Whether an ELF file is statically linked (no PT_INTERP); nullopt if it is not ELF.
std::optional<bool> elf_is_static(const std::string& path);

RootfsReport make_rootfs(const std::string& dir, const std::string& busybox = "");

}  // namespace mininer
