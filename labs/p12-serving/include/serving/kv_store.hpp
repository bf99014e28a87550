// The real K/V tensors behind P07's paged blocks: paged_kv::BlockAllocator
// owns block ids, refcounts, the free queue and (in its token slots) which
// token each slot holds; this store holds, for the same block ids, every
// layer's key and value vectors, in HAL buffers on the model's backend laid
// out as the HAL's paged attention reads them (num_blocks x block_size x
// kv_dim per layer, gpulab_hal.h). It also counts how many leading slots of a
// block hold computed K/V, because the prefix cache indexes a prompt's blocks
// when they are allocated, before their K/V exist. The reference decoder's
// contiguous cache is the same store with one block of a whole context.
#pragma once

#include <cstddef>
#include <vector>

#include "hal/hal.hpp"
#include "paged_kv/block_allocator.hpp"

namespace serving {

class KvStore {
 public:
  // Throws gpulab::RunError when the backend cannot hold the pool.
  KvStore(const gpulab::hal::Backend& backend, std::size_t layers, std::size_t num_blocks,
          std::size_t block_size, std::size_t kv_dim);

  // Writes one token's K and V (kv_dim each) into a slot. Throws gpulab::RunError on a HAL failure.
  void write(std::size_t layer, paged_kv::BlockId block, std::size_t slot, const float* key,
             const float* value);
  [[nodiscard]] const gpulab::hal::DeviceBuffer& keys(std::size_t layer) const { return k_[layer]; }
  [[nodiscard]] const gpulab::hal::DeviceBuffer& values(std::size_t layer) const {
    return v_[layer];
  }
  [[nodiscard]] std::size_t num_blocks() const { return num_blocks_; }
  [[nodiscard]] std::size_t block_size() const { return block_size_; }

  [[nodiscard]] std::size_t filled(paged_kv::BlockId block) const {
    return filled_[static_cast<std::size_t>(block)];
  }
  // Slot `slot` and every one before it now hold computed K/V.
  void mark_filled(paged_kv::BlockId block, std::size_t slot);
  // The block was (re)allocated for new tokens: none of its K/V is valid.
  void clear(paged_kv::BlockId block) { filled_[static_cast<std::size_t>(block)] = 0; }
  [[nodiscard]] std::size_t bytes() const {
    return 2 * k_.size() * num_blocks_ * block_size_ * kv_dim_ * sizeof(float);
  }

 private:
  const gpulab::hal::Backend* backend_;
  std::size_t num_blocks_, block_size_, kv_dim_;
  std::vector<gpulab::hal::DeviceBuffer> k_, v_;  // per layer
  std::vector<std::size_t> filled_;
};

}  // namespace serving
