// A device the container may use: type (char or block) and major:minor.
#pragma once

#include <string>

namespace mininer {

struct DeviceRule {
  char type = 'c';  // 'c' character device, 'b' block device
  unsigned major = 0;
  unsigned minor = 0;
  // "c 1:3" — the v1 devices.allow spelling, without the access letters.
  std::string text() const;
  bool operator==(const DeviceRule&) const = default;
};

// /dev/null: every container gets it (shells redirect into it).
inline constexpr DeviceRule kDevNull{'c', 1, 3};

}  // namespace mininer
