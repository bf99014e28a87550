#include "caching_alloc/bin_tree.hpp"

#include <fmt/format.h>

namespace caching_alloc {

namespace {

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

void BinTree::transplant(Block* u, Block* v) {
  Block* p = u->parent;
  if (p == nullptr) {
    root_ = v;
  } else if (p->left == u) {
    p->left = v;
  } else {
    p->right = v;
  }
  if (v != nullptr) v->parent = p;
}

void BinTree::rotate_left(Block* x) {
  Block* y = x->right;
  x->right = y->left;
  if (y->left != nullptr) y->left->parent = x;
  transplant(x, y);
  y->left = x;
  x->parent = y;
}

void BinTree::rotate_right(Block* x) {
  Block* y = x->left;
  x->left = y->right;
  if (y->right != nullptr) y->right->parent = x;
  transplant(x, y);
  y->right = x;
  x->parent = y;
}

// The tree is not empty (insert() handled that case).
void BinTree::insert_below_root(Block* z) {
  if (less(z, first_)) first_ = z;
  Block* at = root_;
  for (;;) {
    Block*& child = less(z, at) ? at->left : at->right;
    if (child == nullptr) {
      child = z;
      z->parent = at;
      break;
    }
    at = child;
  }
  z->red = true;
  insert_fixup(z);
}

// CLRS's RB-INSERT-FIXUP, with nullptr as the black leaves.
void BinTree::insert_fixup(Block* z) {
  while (z->parent != nullptr && z->parent->red) {
    Block* p = z->parent;
    Block* g = p->parent;  // exists: a red node is never the root
    if (p == g->left) {
      Block* u = g->right;
      if (u != nullptr && u->red) {
        p->red = u->red = false;
        g->red = true;
        z = g;
        continue;
      }
      if (z == p->right) {
        rotate_left(p);
        z = p;
        p = z->parent;
      }
      p->red = false;
      g->red = true;
      rotate_right(g);
    } else {
      Block* u = g->left;
      if (u != nullptr && u->red) {
        p->red = u->red = false;
        g->red = true;
        z = g;
        continue;
      }
      if (z == p->left) {
        rotate_right(p);
        z = p;
        p = z->parent;
      }
      p->red = false;
      g->red = true;
      rotate_left(g);
    }
  }
  root_->red = false;
}

// CLRS's RB-DELETE; x may be a nullptr leaf, so its parent travels beside it.
void BinTree::erase_inner(Block* z) {
  if (z == first_) first_ = next(z);
  bool removed_red = z->red;
  Block* x = nullptr;
  Block* x_parent = nullptr;
  if (z->left == nullptr) {
    x = z->right;
    x_parent = z->parent;
    transplant(z, z->right);
  } else if (z->right == nullptr) {
    x = z->left;
    x_parent = z->parent;
    transplant(z, z->left);
  } else {
    Block* y = leftmost(z->right);
    removed_red = y->red;
    x = y->right;
    if (y->parent == z) {
      x_parent = y;
    } else {
      x_parent = y->parent;
      transplant(y, y->right);
      y->right = z->right;
      y->right->parent = y;
    }
    transplant(z, y);
    y->left = z->left;
    y->left->parent = y;
    y->red = z->red;
  }
  z->parent = z->left = z->right = nullptr;
  if (!removed_red) erase_fixup(x, x_parent);
}

void BinTree::erase_fixup(Block* x, Block* xp) {
  const auto black = [](const Block* b) { return b == nullptr || !b->red; };
  while (x != root_ && black(x)) {
    if (x == xp->left) {
      Block* w = xp->right;  // exists: x's side is one black short
      if (w->red) {
        w->red = false;
        xp->red = true;
        rotate_left(xp);
        w = xp->right;
      }
      if (black(w->left) && black(w->right)) {
        w->red = true;
        x = xp;
        xp = x->parent;
        continue;
      }
      if (black(w->right)) {
        w->left->red = false;
        w->red = true;
        rotate_right(w);
        w = xp->right;
      }
      w->red = xp->red;
      xp->red = false;
      if (w->right != nullptr) w->right->red = false;
      rotate_left(xp);
      x = root_;
    } else {
      Block* w = xp->left;
      if (w->red) {
        w->red = false;
        xp->red = true;
        rotate_right(xp);
        w = xp->left;
      }
      if (black(w->left) && black(w->right)) {
        w->red = true;
        x = xp;
        xp = x->parent;
        continue;
      }
      if (black(w->left)) {
        w->right->red = false;
        w->red = true;
        rotate_left(w);
        w = xp->left;
      }
      w->red = xp->red;
      xp->red = false;
      if (w->left != nullptr) w->left->red = false;
      rotate_right(xp);
      x = root_;
    }
  }
  if (x != nullptr) x->red = false;
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

namespace {
// Black height of the subtree at b, or -1 when the red-black rules fail in it.
int black_height(const Block* b) {
  if (b == nullptr) return 1;
  if (b->red && ((b->left != nullptr && b->left->red) || (b->right != nullptr && b->right->red))) {
    return -1;
  }
  const int l = black_height(b->left);
  const int r = black_height(b->right);
  if (l < 0 || l != r) return -1;
  return l + (b->red ? 0 : 1);
}
}  // namespace

std::string BinTree::check() const {
  if (root_ == nullptr) {
    return size_ == 0 && first_ == nullptr ? std::string{}
                                           : "empty bin with a size or a first block";
  }
  if (root_->parent != nullptr) return "bin root has a parent";
  if (root_->red) return "bin root is red";
  if (black_height(root_) < 0) return "bin breaks the red-black rules";
  std::size_t n = 0;
  const Block* prev = nullptr;
  for (const Block* b = leftmost(root_); b != nullptr; b = next(b)) {
    if (prev == nullptr && b != first_) return "bin's cached first block is not its first";
    if (prev != nullptr && !less(prev, b))
      return fmt::format("bin out of order at 0x{:x}", b->addr);
    for (const Block* c : {b->left, b->right}) {
      if (c != nullptr && c->parent != b)
        return fmt::format("bin link broken under 0x{:x}", b->addr);
    }
    prev = b;
    ++n;
  }
  return n == size_ ? std::string{} : "bin size out of date";
}

}  // namespace caching_alloc
