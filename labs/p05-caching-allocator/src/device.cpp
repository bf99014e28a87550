#include "caching_alloc/device.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

namespace caching_alloc {

Device::Device(std::uint64_t capacity_bytes) : capacity_(capacity_bytes) {
  if (capacity_bytes > 0) holes_.emplace(0, capacity_bytes);
}

std::optional<std::uint64_t> Device::malloc(std::uint64_t bytes) {
  if (bytes == 0) throw std::invalid_argument("device malloc of 0 bytes");
  for (auto it = holes_.begin(); it != holes_.end(); ++it) {
    if (it->second < bytes) continue;
    const std::uint64_t addr = it->first;
    const std::uint64_t rest = it->second - bytes;
    holes_.erase(it);
    if (rest > 0) holes_.emplace(addr + bytes, rest);
    live_.emplace(addr, bytes);
    used_ += bytes;
    ++counters_.mallocs;
    return addr;
  }
  ++counters_.malloc_failures;
  return std::nullopt;
}

void Device::free(std::uint64_t addr) {
  const auto live = live_.find(addr);
  if (live == live_.end()) {
    throw std::invalid_argument(
        fmt::format("device free of 0x{:x}, which is not a live allocation", addr));
  }
  std::uint64_t start = addr;
  std::uint64_t size = live->second;
  live_.erase(live);
  used_ -= size;
  ++counters_.frees;

  // Coalesce with the hole after and the hole before, so holes are never adjacent.
  auto next = holes_.lower_bound(start);
  if (next != holes_.end() && next->first == start + size) {
    size += next->second;
    next = holes_.erase(next);
  }
  if (next != holes_.begin()) {
    auto prev = std::prev(next);
    if (prev->first + prev->second == start) {
      start = prev->first;
      size += prev->second;
      holes_.erase(prev);
    }
  }
  holes_.emplace(start, size);
}

std::uint64_t Device::largest_hole() const {
  std::uint64_t best = 0;
  for (const auto& [addr, size] : holes_) best = std::max(best, size);
  return best;
}

}  // namespace caching_alloc
