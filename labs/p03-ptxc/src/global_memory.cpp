#include "ptxc/global_memory.hpp"

#include <fmt/format.h>

#include <bit>

namespace ptxc {

std::uint64_t GlobalMemory::allocate(std::string name, std::span<const float> init) {
  Buffer b{std::move(name), next_, std::vector<float>(init.begin(), init.end())};
  const std::uint64_t bytes = b.data.size() * sizeof(float);
  next_ += (bytes + kGap + 255) / 256 * 256;
  buffers_.push_back(std::move(b));
  return buffers_.back().base;
}

int GlobalMemory::find(std::uint64_t addr) const {
  if (addr % 4 != 0) return -1;
  for (std::size_t k = 0; k < buffers_.size(); ++k) {
    const Buffer& b = buffers_[k];
    if (addr >= b.base && addr - b.base + 4 <= b.data.size() * sizeof(float))
      return static_cast<int>(k);
  }
  return -1;
}

std::uint32_t GlobalMemory::load32(std::uint64_t addr) const {
  const int k = find(addr);
  if (k < 0)
    throw MemoryFault(
        fmt::format("out-of-bounds load of 4 bytes at 0x{:x}: {}", addr, describe(addr)), addr);
  const Buffer& b = buffers_[static_cast<std::size_t>(k)];
  return std::bit_cast<std::uint32_t>(b.data[(addr - b.base) / 4]);
}

void GlobalMemory::store32(std::uint64_t addr, std::uint32_t bits) {
  const int k = find(addr);
  if (k < 0)
    throw MemoryFault(
        fmt::format("out-of-bounds store of 4 bytes at 0x{:x}: {}", addr, describe(addr)), addr);
  Buffer& b = buffers_[static_cast<std::size_t>(k)];
  b.data[(addr - b.base) / 4] = std::bit_cast<float>(bits);
}

std::string GlobalMemory::describe(std::uint64_t addr) const {
  if (addr % 4 != 0) return "misaligned (f32 accesses need 4-byte alignment)";
  // The nearest buffer that starts at or below the address.
  const Buffer* near = nullptr;
  for (const auto& b : buffers_)
    if (b.base <= addr && (near == nullptr || b.base > near->base)) near = &b;
  if (near == nullptr) return "below every buffer";
  const std::uint64_t size = near->data.size() * sizeof(float);
  return fmt::format("{} bytes past the end of '{}' ({} bytes at 0x{:x})", addr - near->base - size,
                     near->name, size, near->base);
}

}  // namespace ptxc
