// The physical KV pool: fixed-size blocks, reference counts, and a free queue
// kept in least-recently-freed order (vLLM's FreeKVCacheBlockQueue), so that
// allocation pops the coldest block and a prefix-cache hit can pull a freed
// block back out of the middle — all O(1), no allocation after construction.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <stdexcept>
#include <vector>

namespace paged_kv {

using Token = std::int32_t;    // stands in for one token's K and V vectors
using BlockId = std::int32_t;  // index of a physical block in the pool

// Releasing a block whose reference count is already zero: the caller's
// bookkeeping is wrong, and silently accepting it would corrupt other sharers.
struct DoubleFree : std::logic_error {
  using std::logic_error::logic_error;
};

class BlockAllocator {
 public:
  // Throws std::invalid_argument for a zero pool or block size.
  BlockAllocator(std::size_t num_blocks, std::size_t block_size);

  // The least recently freed block with reference count 1, or nullopt when
  // the pool is exhausted (an outcome the caller reports, never UB).
  std::optional<BlockId> allocate();
  // One more owner of a live block (prefix sharing, fork). Throws DoubleFree
  // style std::logic_error if the block is not live.
  void share(BlockId id);
  // Takes a freed-but-still-cached block back out of the free queue
  // (a prefix-cache hit on a block no sequence holds any more).
  void revive(BlockId id);
  // Drops one owner; at zero the block goes to the tail of the free queue.
  // Returns true when it was reclaimed. Throws DoubleFree at refcount 0.
  bool release(BlockId id);

  // Blocks whose contents are indexed by a prefix cache. When such a block is
  // popped for reuse, the listener hears about it first (cache eviction).
  void mark_cached(BlockId id, bool cached = true);
  [[nodiscard]] bool is_cached(BlockId id) const;
  void set_evict_listener(std::function<void(BlockId)> listener) {
    on_evict_ = std::move(listener);
  }

  [[nodiscard]] int refcount(BlockId id) const;
  [[nodiscard]] std::size_t num_blocks() const { return refcount_.size(); }
  [[nodiscard]] std::size_t block_size() const { return block_size_; }
  [[nodiscard]] std::size_t free_blocks() const { return free_count_; }
  [[nodiscard]] std::size_t used_blocks() const { return num_blocks() - free_count_; }
  // Live blocks with more than one owner (a shared prefix, a fork); O(blocks).
  [[nodiscard]] std::size_t shared_blocks() const {
    return static_cast<std::size_t>(
        std::count_if(refcount_.begin(), refcount_.end(), [](int r) { return r > 1; }));
  }
  // Free-queue order, head (next to be allocated) first; for tests and traces.
  [[nodiscard]] std::vector<BlockId> free_queue() const;

  // The block's token slots: the "KV data" that copy-on-write must preserve.
  [[nodiscard]] std::span<Token> slots(BlockId id);
  [[nodiscard]] std::span<const Token> slots(BlockId id) const;

 private:
  void check(BlockId id) const;
  void unlink(BlockId id);
  void push_tail(BlockId id);

  std::size_t block_size_;
  std::vector<int> refcount_;
  std::vector<std::uint8_t> cached_;
  // Intrusive doubly linked free queue over block indices; index num_blocks()
  // is the sentinel, so insert and remove never branch on empty.
  std::vector<BlockId> prev_;
  std::vector<BlockId> next_;
  std::size_t free_count_;
  std::vector<Token> storage_;
  std::function<void(BlockId)> on_evict_;
};

}  // namespace paged_kv
