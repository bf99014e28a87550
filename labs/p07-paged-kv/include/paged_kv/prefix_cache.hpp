// Automatic prefix caching the way vLLM v1 does it: every *full* block of a
// prompt gets a chained hash (parent block's hash + this block's tokens), the
// hash → block map lets a new request adopt the longest cached prefix, and
// freed cached blocks wait in the pool's LRU free queue until reuse evicts
// them. Shared blocks are full and never written, so no copy is ever needed.
#pragma once

#include <cstdint>
#include <span>
#include <unordered_map>
#include <vector>

#include "paged_kv/block_allocator.hpp"
#include "paged_kv/sequence.hpp"

namespace paged_kv {

using BlockHash = std::uint64_t;

// Chained hashes of the full blocks of `tokens` (xxHash XXH3-64, seeded with
// the parent hash, so equal blocks after different prefixes hash differently).
[[nodiscard]] std::vector<BlockHash> chained_block_hashes(std::span<const Token> tokens,
                                                          std::size_t block_size);

struct PrefixCacheStats {
  std::uint64_t lookups = 0;     // full prompt blocks looked up
  std::uint64_t hits = 0;        // of those, found cached and adopted
  std::uint64_t evictions = 0;   // cached blocks reused for other data
  std::uint64_t collisions = 0;  // hash matched but tokens did not (treated as a miss)
  [[nodiscard]] double hit_rate() const {
    return lookups ? static_cast<double>(hits) / static_cast<double>(lookups) : 0;
  }
};

struct Admission {
  Sequence sequence;
  std::size_t cached_tokens = 0;  // prompt tokens whose KV was reused (no prefill)
  Status status = Status::kOk;    // kPoolExhausted: nothing is held
};

class PrefixCache {
 public:
  // Installs itself as the pool's eviction listener; the pool must outlive it.
  explicit PrefixCache(BlockAllocator& pool);
  ~PrefixCache();
  PrefixCache(const PrefixCache&) = delete;
  PrefixCache& operator=(const PrefixCache&) = delete;

  // A sequence holding `prompt`: the longest cached run of full blocks is
  // adopted (capped at prompt.size() - 1 tokens: the last token is always
  // recomputed, because its logits are needed), the rest is appended, and
  // the prompt's full blocks are entered into the cache.
  Admission admit(std::span<const Token> prompt);
  // Enters the full blocks of `seq` (which holds `tokens`) into the cache;
  // blocks whose hash is already cached elsewhere are left alone, so block
  // tables stay append-only (vLLM does not de-duplicate either).
  void register_blocks(const Sequence& seq, std::span<const Token> tokens);

  [[nodiscard]] const PrefixCacheStats& stats() const { return stats_; }
  [[nodiscard]] std::size_t cached_blocks() const { return by_hash_.size(); }

 private:
  void on_evict(BlockId id);

  BlockAllocator* pool_;
  std::unordered_map<BlockHash, BlockId> by_hash_;
  std::vector<BlockHash> hash_of_;  // per block, valid while the block is cached
  PrefixCacheStats stats_;
};

}  // namespace paged_kv
