#include "paged_kv/block_allocator.hpp"

#include <fmt/core.h>

#include <limits>

namespace paged_kv {

BlockAllocator::BlockAllocator(std::size_t num_blocks, std::size_t block_size)
    : block_size_(block_size), free_count_(num_blocks) {
  if (num_blocks == 0) throw std::invalid_argument("the pool needs at least one block");
  if (block_size == 0) throw std::invalid_argument("block size must be at least one token");
  if (num_blocks >= static_cast<std::size_t>(std::numeric_limits<BlockId>::max()))
    throw std::invalid_argument(fmt::format("a pool of {} blocks is too large", num_blocks));
  // Token slots are 4 bytes each: cap the modelled pool at 2^28 slots (1 GiB).
  if (num_blocks > (std::size_t{1} << 28) / block_size)
    throw std::invalid_argument(fmt::format(
        "a pool of {} blocks x {} tokens is too large to model (at most 2^28 token slots)",
        num_blocks, block_size));
  refcount_.assign(num_blocks, 0);
  cached_.assign(num_blocks, 0);
  storage_.assign(num_blocks * block_size, 0);
  prev_.resize(num_blocks + 1);
  next_.resize(num_blocks + 1);
  const auto sentinel = static_cast<BlockId>(num_blocks);
  // Initially every block is free, in id order: 0 is allocated first.
  for (std::size_t i = 0; i <= num_blocks; ++i) {
    const auto id = static_cast<BlockId>(i);
    next_[i] = id == sentinel ? 0 : id + 1;
    prev_[i] = id == 0 ? sentinel : id - 1;
  }
  next_[num_blocks - 1] = sentinel;
  prev_[num_blocks] = static_cast<BlockId>(num_blocks - 1);
}

void BlockAllocator::check(BlockId id) const {
  if (id < 0 || static_cast<std::size_t>(id) >= refcount_.size())
    throw std::out_of_range(fmt::format("block {} is not in the pool of {}", id, refcount_.size()));
}

void BlockAllocator::unlink(BlockId id) {
  next_[prev_[id]] = next_[id];
  prev_[next_[id]] = prev_[id];
  --free_count_;
}

void BlockAllocator::push_tail(BlockId id) {
  const auto sentinel = static_cast<BlockId>(num_blocks());
  const BlockId last = prev_[sentinel];
  next_[last] = id;
  prev_[id] = last;
  next_[id] = sentinel;
  prev_[sentinel] = id;
  ++free_count_;
}

std::optional<BlockId> BlockAllocator::allocate() {
  if (free_count_ == 0) return std::nullopt;
  const BlockId id = next_[num_blocks()];
  unlink(id);
  refcount_[id] = 1;
  if (cached_[id]) {  // reusing a cached block evicts its contents from the prefix cache
    cached_[id] = 0;
    if (on_evict_) on_evict_(id);
  }
  return id;
}

void BlockAllocator::share(BlockId id) {
  check(id);
  if (refcount_[id] == 0)
    throw std::logic_error(fmt::format("share of block {}, which is free", id));
  ++refcount_[id];
}

void BlockAllocator::revive(BlockId id) {
  check(id);
  if (refcount_[id] != 0) throw std::logic_error(fmt::format("revive of live block {}", id));
  unlink(id);
  refcount_[id] = 1;
}

bool BlockAllocator::release(BlockId id) {
  check(id);
  if (refcount_[id] == 0) throw DoubleFree(fmt::format("double free of block {}", id));
  if (--refcount_[id] > 0) return false;
  push_tail(id);
  return true;
}

void BlockAllocator::mark_cached(BlockId id, bool cached) {
  check(id);
  cached_[id] = cached ? 1 : 0;
}

bool BlockAllocator::is_cached(BlockId id) const {
  check(id);
  return cached_[id] != 0;
}

int BlockAllocator::refcount(BlockId id) const {
  check(id);
  return refcount_[id];
}

std::vector<BlockId> BlockAllocator::free_queue() const {
  std::vector<BlockId> out;
  out.reserve(free_count_);
  const auto sentinel = static_cast<BlockId>(num_blocks());
  for (BlockId id = next_[sentinel]; id != sentinel; id = next_[id]) out.push_back(id);
  return out;
}

std::span<Token> BlockAllocator::slots(BlockId id) {
  check(id);
  return {storage_.data() + static_cast<std::size_t>(id) * block_size_, block_size_};
}

std::span<const Token> BlockAllocator::slots(BlockId id) const {
  check(id);
  return {storage_.data() + static_cast<std::size_t>(id) * block_size_, block_size_};
}

}  // namespace paged_kv
