// Where Block records live: chunks of 256 that are never moved or returned
// until the allocator goes, with released records on a free list. A split or
// a new segment takes a record in O(1) without calling malloc (except once per
// 256 records of peak), and pointers to a record stay valid for its lifetime.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "caching_alloc/block.hpp"

namespace caching_alloc {

class BlockPool {
 public:
  // A default-initialised record.
  Block* make() {
    if (free_ == nullptr) grow();
    Block* b = free_;
    free_ = b->next;
    *b = Block{};
    return b;
  }
  void release(Block* b) {
    b->next = free_;
    free_ = b;
  }

 private:
  static constexpr std::size_t kChunk = 256;
  void grow() {
    chunks_.push_back(std::make_unique<Block[]>(kChunk));
    Block* chunk = chunks_.back().get();
    for (std::size_t i = 0; i < kChunk; ++i) release(&chunk[i]);
  }

  std::vector<std::unique_ptr<Block[]>> chunks_;
  Block* free_ = nullptr;  // linked through Block::next
};

}  // namespace caching_alloc
