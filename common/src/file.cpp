#include "gpulab/file.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

namespace gpulab {

std::string format_byte_limit(std::size_t bytes) {
  constexpr std::size_t kMiB = std::size_t{1} << 20;
  if (bytes >= kMiB && bytes % kMiB == 0) return fmt::format("{} MiB", bytes / kMiB);
  return fmt::format("{} bytes", bytes);
}

Expected<std::string> read_text_file(const std::string& path, std::size_t limit) {
  const std::unique_ptr<std::FILE, int (*)(std::FILE*)> f(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!f) return Error{fmt::format("cannot open '{}': {}", path, std::strerror(errno))};
  std::string text;
  char buf[1 << 16];
  while (true) {
    const std::size_t n = std::fread(buf, 1, sizeof buf, f.get());
    if (n == 0) break;
    if (text.size() + n > limit) return Error{fmt::format("'{}' is larger than {}", path, format_byte_limit(limit))};
    text.append(buf, n);
  }
  if (std::ferror(f.get()) != 0) return Error{fmt::format("cannot read '{}': {}", path, std::strerror(errno))};
  return text;
}

}  // namespace gpulab
