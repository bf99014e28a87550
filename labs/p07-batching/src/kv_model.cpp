#include "batching/kv_model.hpp"

#include <unordered_map>
#include <vector>

#include "batching/engine_kv.hpp"
#include "paged_kv/prefix_cache.hpp"

namespace batching {

struct PagedPrefixKv::Impl {
  Impl(std::size_t blocks, std::size_t bs, bool on) : pool(blocks, bs), cache(pool), caching(on) {}
  paged_kv::BlockAllocator pool;
  paged_kv::PrefixCache cache;
  bool caching;
  std::unordered_map<std::size_t, paged_kv::Sequence> live;
  std::vector<paged_kv::Token> prompt;
};

PagedPrefixKv::PagedPrefixKv(std::size_t pool_blocks, std::size_t block_size, bool caching)
    : impl_(std::make_unique<Impl>(pool_blocks, block_size, caching)) {}
PagedPrefixKv::~PagedPrefixKv() = default;

bool PagedPrefixKv::can_ever_fit(const Request& r) const {
  return paged_kv::blocks_for(std::size_t{r.prompt_tokens} + r.output_tokens,
                              impl_->pool.block_size()) <= impl_->pool.num_blocks();
}

std::optional<std::uint32_t> PagedPrefixKv::admit(std::size_t index, const Request& r) {
  // At most this many blocks come out of the free queue (a hit on a block that
  // another request holds takes none), so the admission below cannot fail
  // halfway, and a refused request never touches the cache's statistics.
  if (impl_->pool.free_blocks() <
      paged_kv::blocks_for(std::size_t{r.prompt_tokens} + r.output_tokens,
                           impl_->pool.block_size()))
    return std::nullopt;
  auto& p = impl_->prompt;
  p.clear();
  for (std::uint32_t t = 0; t < r.prompt_tokens; ++t) p.push_back(simulated_token(index, r, t));

  std::uint32_t cached = 0;
  paged_kv::Sequence seq(impl_->pool);
  if (impl_->caching) {
    paged_kv::Admission a = impl_->cache.admit(p);
    if (a.status != paged_kv::Status::kOk) return std::nullopt;
    cached = static_cast<std::uint32_t>(a.cached_tokens);
    seq = std::move(a.sequence);
  } else if (seq.append(p) != paged_kv::Status::kOk) {
    return std::nullopt;
  }
  // Reserve the output's slots now, so decoding never runs out mid-request
  // (admission control instead of preemption).
  for (std::uint32_t t = 0; t < r.output_tokens; ++t)
    if (seq.append(0) != paged_kv::Status::kOk) return std::nullopt;  // seq frees what it took
  impl_->live.emplace(index, std::move(seq));
  return cached;
}

void PagedPrefixKv::finish(std::size_t index) {
  impl_->live.erase(index);
}

PrefixKvStats PagedPrefixKv::stats() const {
  const auto& s = impl_->cache.stats();
  return {s.lookups, s.hits, s.evictions};
}

}  // namespace batching
