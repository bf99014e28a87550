// One size-class bin: the free blocks of that class as an ordered set, by
// address (first fit) or by (size, address) (best fit). The order decides
// which block a request gets, so it is exactly the order std::set<(key, addr)>
// gave before; what changed is the cost. The tree is intrusive (a red-black
// tree whose links live in the Block), so insert and erase never allocate and
// rebalance with at most three rotations, and the first block is cached, so
// the common first-fit hit reads one pointer. (A treap was tried first: with
// 32 blocks in a bin it rotated ~15 times per free+alloc, 4x the cost.)
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "caching_alloc/block.hpp"

namespace caching_alloc {

class BinTree {
 public:
  explicit BinTree(bool by_size = false) : by_size_(by_size) {}

  // The one- and zero-block cases (a bin hit's steady state) are handled
  // inline; anything that has to walk or rotate goes out of line.
  void insert(Block* b) {
    b->left = b->right = nullptr;
    ++size_;
    if (root_ == nullptr) {
      b->parent = nullptr;
      b->red = false;
      root_ = first_ = b;
      return;
    }
    insert_below_root(b);
  }
  void erase(Block* b) {
    --size_;
    if (b == root_ && b->left == nullptr && b->right == nullptr) {
      root_ = first_ = nullptr;
      return;
    }
    erase_inner(b);
  }

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
  // Empty when the links, the order and the red-black rules hold; else what is broken.
  [[nodiscard]] std::string check() const;

 private:
  [[nodiscard]] bool less(const Block* a, const Block* b) const {
    if (by_size_ && a->size != b->size) return a->size < b->size;
    return a->addr < b->addr;
  }
  void insert_below_root(Block* b);
  void erase_inner(Block* b);
  void insert_fixup(Block* z);
  void erase_fixup(Block* x, Block* x_parent);
  void rotate_left(Block* x);
  void rotate_right(Block* x);
  // Puts `v` (may be nullptr) where `u` hangs in the tree.
  void transplant(Block* u, Block* v);

  Block* root_ = nullptr;
  Block* first_ = nullptr;
  std::size_t size_ = 0;
  bool by_size_;
};

}  // namespace caching_alloc
