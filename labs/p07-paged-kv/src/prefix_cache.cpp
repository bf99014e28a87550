#include "paged_kv/prefix_cache.hpp"

#include <xxhash.h>

#include <algorithm>

namespace paged_kv {
namespace {
// vLLM seeds the chain with a random NONE_HASH per process; a constant keeps
// our runs reproducible.
constexpr BlockHash kRootHash = 0x9e3779b97f4a7c15ULL;
}  // namespace

std::vector<BlockHash> chained_block_hashes(std::span<const Token> tokens, std::size_t block_size) {
  std::vector<BlockHash> out;
  const std::size_t full = tokens.size() / block_size;
  out.reserve(full);
  BlockHash parent = kRootHash;
  for (std::size_t b = 0; b < full; ++b) {
    parent =
        XXH3_64bits_withSeed(tokens.data() + b * block_size, block_size * sizeof(Token), parent);
    out.push_back(parent);
  }
  return out;
}

PrefixCache::PrefixCache(BlockAllocator& pool) : pool_(&pool), hash_of_(pool.num_blocks(), 0) {
  pool.set_evict_listener([this](BlockId id) { on_evict(id); });
}

PrefixCache::~PrefixCache() {
  pool_->set_evict_listener(nullptr);
  for (const auto& [hash, id] : by_hash_) pool_->mark_cached(id, false);
}

void PrefixCache::on_evict(BlockId id) {
  const auto it = by_hash_.find(hash_of_[id]);
  if (it != by_hash_.end() && it->second == id) by_hash_.erase(it);
  ++stats_.evictions;
}

Admission PrefixCache::admit(std::span<const Token> prompt) {
  const std::size_t bs = pool_->block_size();
  const auto hashes = chained_block_hashes(prompt, bs);
  const std::size_t max_hit_blocks = prompt.empty() ? 0 : (prompt.size() - 1) / bs;
  const std::size_t eligible = std::min(hashes.size(), max_hit_blocks);
  stats_.lookups += eligible;  // the hit rate is over every full block a prompt could reuse
  std::vector<BlockId> hit;
  for (std::size_t b = 0; b < eligible; ++b) {
    const auto it = by_hash_.find(hashes[b]);
    if (it == by_hash_.end()) break;
    // A 64-bit hash can collide; comparing the tokens makes a collision a miss, never wrong KV.
    const auto slots = pool_->slots(it->second);
    if (!std::equal(slots.begin(), slots.end(),
                    prompt.begin() + static_cast<std::ptrdiff_t>(b * bs))) {
      ++stats_.collisions;
      break;
    }
    if (pool_->refcount(it->second) == 0)
      pool_->revive(it->second);
    else
      pool_->share(it->second);
    hit.push_back(it->second);
    ++stats_.hits;
  }
  const std::size_t cached = hit.size() * bs;
  Admission a{Sequence(*pool_, std::move(hit), cached), cached, Status::kOk};
  a.status = a.sequence.append(prompt.subspan(cached));
  if (a.status != Status::kOk) {
    a.sequence.release();
    a.cached_tokens = 0;
    return a;
  }
  register_blocks(a.sequence, prompt);
  return a;
}

void PrefixCache::register_blocks(const Sequence& seq, std::span<const Token> tokens) {
  const auto hashes = chained_block_hashes(tokens.first(std::min(tokens.size(), seq.length())),
                                           pool_->block_size());
  const auto table = seq.block_table();
  for (std::size_t b = 0; b < hashes.size(); ++b) {
    const BlockId id = table[b];
    if (pool_->is_cached(id)) continue;
    if (by_hash_.emplace(hashes[b], id).second) {
      hash_of_[id] = hashes[b];
      pool_->mark_cached(id);
    }
  }
}

}  // namespace paged_kv
