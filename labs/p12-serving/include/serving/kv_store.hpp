// The real K/V tensors behind P07's paged blocks: paged_kv::BlockAllocator
// owns block ids, refcounts, the free queue and (in its token slots) which
// token each slot holds; this store holds, for the same block ids, every
// layer's key and value vectors. It also counts how many leading slots of a
// block hold computed K/V, because the prefix cache indexes a prompt's blocks
// when they are allocated, before their K/V exist.
#pragma once

#include <cstddef>
#include <vector>

#include "paged_kv/block_allocator.hpp"

namespace serving {

class KvStore {
 public:
  KvStore(std::size_t layers, std::size_t num_blocks, std::size_t block_size, std::size_t kv_dim);

  [[nodiscard]] float* key(std::size_t layer, paged_kv::BlockId block, std::size_t slot) {
    return k_.data() + offset(layer, block, slot);
  }
  [[nodiscard]] float* value(std::size_t layer, paged_kv::BlockId block, std::size_t slot) {
    return v_.data() + offset(layer, block, slot);
  }
  [[nodiscard]] std::size_t filled(paged_kv::BlockId block) const { return filled_[static_cast<std::size_t>(block)]; }
  // Slot `slot` and every one before it now hold computed K/V.
  void mark_filled(paged_kv::BlockId block, std::size_t slot);
  // The block was (re)allocated for new tokens: none of its K/V is valid.
  void clear(paged_kv::BlockId block) { filled_[static_cast<std::size_t>(block)] = 0; }
  [[nodiscard]] std::size_t bytes() const { return (k_.size() + v_.size()) * sizeof(float); }

 private:
  [[nodiscard]] std::size_t offset(std::size_t layer, paged_kv::BlockId block, std::size_t slot) const {
    return ((layer * num_blocks_ + static_cast<std::size_t>(block)) * block_size_ + slot) * kv_dim_;
  }
  std::size_t num_blocks_, block_size_, kv_dim_;
  std::vector<float> k_, v_;
  std::vector<std::size_t> filled_;
};

}  // namespace serving
