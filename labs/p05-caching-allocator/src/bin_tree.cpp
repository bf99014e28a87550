#include "caching_alloc/bin_tree.hpp"

#include <fmt/format.h>

namespace caching_alloc {

namespace {

// Heap priorities from the address: deterministic, and spread enough that the
// treap stays balanced in expectation (Fibonacci hashing of the 512 B unit).
std::uint32_t priority_of(std::uint64_t addr) {
  return static_cast<std::uint32_t>(((addr >> 9) * 0x9E3779B97F4A7C15ull) >> 32);
}

Block* leftmost(Block* b) {
  while (b->left != nullptr) b = b->left;
  return b;
}

}  // namespace

Block* BinTree::next(const Block* b) {
  if (b->right != nullptr) return leftmost(b->right);
  while (b->parent != nullptr && b->parent->right == b) b = b->parent;
  return b->parent;
}

Block* BinTree::last() const {
  Block* b = root_;
  if (b == nullptr) return nullptr;
  while (b->right != nullptr) b = b->right;
  return b;
}

void BinTree::replace_child(Block* parent, Block* old_child, Block* new_child) {
  if (parent == nullptr) {
    root_ = new_child;
  } else if (parent->left == old_child) {
    parent->left = new_child;
  } else {
    parent->right = new_child;
  }
  if (new_child != nullptr) new_child->parent = parent;
}

// Lifts x above its parent, keeping the in-order sequence unchanged.
void BinTree::rotate_up(Block* x) {
  Block* p = x->parent;
  Block* g = p->parent;
  if (p->left == x) {
    p->left = x->right;
    if (x->right != nullptr) x->right->parent = p;
    x->right = p;
  } else {
    p->right = x->left;
    if (x->left != nullptr) x->left->parent = p;
    x->left = p;
  }
  p->parent = x;
  replace_child(g, p, x);
}

void BinTree::insert(Block* b) {
  b->left = b->right = nullptr;
  b->priority = priority_of(b->addr);
  ++size_;
  if (root_ == nullptr) {
    b->parent = nullptr;
    root_ = first_ = b;
    return;
  }
  if (less(b, first_)) first_ = b;
  Block* at = root_;
  for (;;) {
    Block*& child = less(b, at) ? at->left : at->right;
    if (child == nullptr) {
      child = b;
      b->parent = at;
      break;
    }
    at = child;
  }
  while (b->parent != nullptr && b->priority < b->parent->priority) rotate_up(b);
}

void BinTree::erase(Block* b) {
  if (b == first_) first_ = next(b);
  // Rotate b down (its higher-priority child up) until it has at most one child.
  while (b->left != nullptr && b->right != nullptr) {
    rotate_up(b->left->priority < b->right->priority ? b->left : b->right);
  }
  replace_child(b->parent, b, b->left != nullptr ? b->left : b->right);
  b->parent = b->left = b->right = nullptr;
  --size_;
}

Block* BinTree::lower_bound_size(std::uint64_t size) const {
  Block* found = nullptr;
  for (Block* at = root_; at != nullptr;) {
    if (at->size >= size) {
      found = at;
      at = at->left;
    } else {
      at = at->right;
    }
  }
  return found;
}

bool BinTree::contains(const Block* b) const {
  for (const Block* at = root_; at != nullptr;) {
    if (at == b) return true;
    at = less(b, at) ? at->left : at->right;
  }
  return false;
}

std::string BinTree::check() const {
  if (root_ == nullptr) {
    return size_ == 0 && first_ == nullptr ? std::string{} : "empty bin with a size or a first block";
  }
  if (root_->parent != nullptr) return "bin root has a parent";
  std::size_t n = 0;
  const Block* prev = nullptr;
  for (const Block* b = leftmost(root_); b != nullptr; b = next(b)) {
    if (prev == nullptr && b != first_) return "bin's cached first block is not its first";
    if (prev != nullptr && !less(prev, b)) return fmt::format("bin out of order at 0x{:x}", b->addr);
    for (const Block* c : {b->left, b->right}) {
      if (c == nullptr) continue;
      if (c->parent != b) return fmt::format("bin link broken under 0x{:x}", b->addr);
      if (c->priority < b->priority) return fmt::format("bin heap order broken under 0x{:x}", b->addr);
    }
    prev = b;
    ++n;
  }
  return n == size_ ? std::string{} : "bin size out of date";
}

}  // namespace caching_alloc
