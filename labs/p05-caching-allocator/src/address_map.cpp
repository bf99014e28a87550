#include "caching_alloc/address_map.hpp"

#include <bit>
#include <utility>

namespace caching_alloc {

void AddressMap::rehash(std::size_t capacity) {
  std::vector<Slot> old = std::exchange(slots_, std::vector<Slot>(capacity));
  mask_ = capacity - 1;
  shift_ = 64 - std::countr_zero(capacity);
  size_ = 0;
  for (const Slot& s : old) {
    if (s.block != nullptr) insert(s.addr, s.block);
  }
}

void AddressMap::insert(std::uint64_t addr, Block* block) {
  if (2 * (size_ + 1) > slots_.size()) rehash(2 * slots_.size());
  std::size_t i = home(addr);
  while (slots_[i].block != nullptr) i = (i + 1) & mask_;
  slots_[i] = Slot{addr, block};
  ++size_;
}

void AddressMap::erase(std::uint64_t addr) {
  std::size_t i = home(addr);
  while (slots_[i].addr != addr || slots_[i].block == nullptr) i = (i + 1) & mask_;
  // Backward shift: pull later entries of the probe run into the hole when the
  // hole lies on their way from their home slot, so every lookup still finds them.
  for (std::size_t j = (i + 1) & mask_; slots_[j].block != nullptr; j = (j + 1) & mask_) {
    const std::size_t h = home(slots_[j].addr);
    const bool hole_between = ((j - h) & mask_) >= ((j - i) & mask_);
    if (hole_between) {
      slots_[i] = slots_[j];
      i = j;
    }
  }
  slots_[i] = Slot{};
  --size_;
}

}  // namespace caching_alloc
