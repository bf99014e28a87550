// Address -> block for every block of every segment, live or cached: what
// free(addr) looks up. Open addressing with linear probing in a power-of-two
// table kept at most half full, and backward-shift deletion (no tombstones),
// so a lookup is one multiply and usually one probe, and only growth allocates.
// (std::unordered_map paid a division by a prime and a pointer chase per lookup.)
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "caching_alloc/block.hpp"

namespace caching_alloc {

class AddressMap {
 public:
  AddressMap() { rehash(64); }

  // nullptr when no block starts at `addr`.
  [[nodiscard]] Block* find(std::uint64_t addr) const {
    for (std::size_t i = home(addr);; i = (i + 1) & mask_) {
      const Slot& s = slots_[i];
      if (s.block == nullptr) return nullptr;
      if (s.addr == addr) return s.block;
    }
  }
  // `addr` must not be in the map yet.
  void insert(std::uint64_t addr, Block* block);
  // `addr` must be in the map.
  void erase(std::uint64_t addr);
  [[nodiscard]] std::size_t size() const { return size_; }

 private:
  struct Slot {
    std::uint64_t addr = 0;
    Block* block = nullptr;  // nullptr = empty slot
  };
  // Block addresses are multiples of 512: hash the 512 B unit (Fibonacci hashing).
  [[nodiscard]] std::size_t home(std::uint64_t addr) const {
    return static_cast<std::size_t>(((addr >> 9) * 0x9E3779B97F4A7C15ull) >> shift_);
  }
  void rehash(std::size_t capacity);

  std::vector<Slot> slots_;
  std::size_t mask_ = 0;
  int shift_ = 0;
  std::size_t size_ = 0;
};

}  // namespace caching_alloc
