// One size-class bin: the free blocks of that class as an ordered set, by
// address (first fit) or by (size, address) (best fit). The order decides
// which block a request gets, so it is exactly the order std::set<(key, addr)>
// gave before; what changed is the cost. The tree is intrusive (a treap whose
// links live in the Block), so insert and erase never allocate, and the first
// block is cached, so the common first-fit hit reads one pointer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "caching_alloc/block.hpp"

namespace caching_alloc {

class BinTree {
 public:
  explicit BinTree(bool by_size = false) : by_size_(by_size) {}

  void insert(Block* b);
  void erase(Block* b);

  [[nodiscard]] bool empty() const { return root_ == nullptr; }
  [[nodiscard]] std::size_t size() const { return size_; }
  [[nodiscard]] Block* first() const { return first_; }
  [[nodiscard]] Block* last() const;
  // The block after `b` in the bin's order; nullptr after the last.
  static Block* next(const Block* b);
  // By-size bins: the first block whose size is at least `size`.
  [[nodiscard]] Block* lower_bound_size(std::uint64_t size) const;
  // Whether `b` is in this tree, found by its key (for the invariant check).
  [[nodiscard]] bool contains(const Block* b) const;
  // Empty when the links, the order and the heap property hold; else what is broken.
  [[nodiscard]] std::string check() const;

 private:
  [[nodiscard]] bool less(const Block* a, const Block* b) const {
    if (by_size_ && a->size != b->size) return a->size < b->size;
    return a->addr < b->addr;
  }
  void rotate_up(Block* x);
  void replace_child(Block* parent, Block* old_child, Block* new_child);

  Block* root_ = nullptr;
  Block* first_ = nullptr;
  std::size_t size_ = 0;
  bool by_size_;
};

}  // namespace caching_alloc
