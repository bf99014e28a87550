#include "platform/task/checksum.hpp"

#include <fmt/format.h>

namespace gpulab::platform::task {

std::uint64_t fnv1a64(std::span<const std::byte> bytes, std::uint64_t hash) {
  for (const std::byte b : bytes) {
    hash ^= std::to_integer<std::uint64_t>(b);
    hash *= 0x100000001b3ULL;
  }
  return hash;
}

std::string hex64(std::uint64_t value) {
  return fmt::format("{:016x}", value);
}

}  // namespace gpulab::platform::task
