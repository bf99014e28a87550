#include "batching/engine_kv.hpp"

#include <algorithm>
#include <stdexcept>
#include <unordered_map>
#include <vector>

#include "paged_kv/prefix_cache.hpp"

namespace batching {

std::int32_t simulated_token(std::size_t index, const Request& r, std::uint32_t pos) {
  if (pos < r.system_tokens) return r.system_prompt * 1'000'000 + static_cast<std::int32_t>(pos);
  return -static_cast<std::int32_t>((index % 100'000) * 20'000 + pos % 20'000) - 1;
}

struct EngineKv::Impl {
  Impl(std::size_t blocks, std::size_t bs, bool on)
      : pool(blocks, bs), filled(blocks, 0), block_size(bs) {
    if (on) cache = std::make_unique<paged_kv::PrefixCache>(pool);
  }
  ~Impl() { live.clear(); }  // block tables go back before the cache and the pool

  struct Held {
    paged_kv::Sequence seq;
    const Request* req;
  };
  paged_kv::BlockAllocator pool;
  std::unique_ptr<paged_kv::PrefixCache> cache;
  std::vector<std::size_t> filled;  // per physical block: slots whose K/V is computed
  std::size_t block_size;
  std::unordered_map<std::size_t, Held> live;
  std::vector<paged_kv::Token> scratch;
  std::uint64_t skipped = 0, preemptions = 0;

  Held& at(std::size_t index) {
    auto it = live.find(index);
    if (it == live.end()) throw std::logic_error("EngineKv: request not admitted");
    return it->second;
  }
};

EngineKv::EngineKv(std::size_t pool_blocks, std::size_t block_size, bool prefix_cache)
    : impl_(std::make_unique<Impl>(pool_blocks, block_size, prefix_cache)) {}
EngineKv::~EngineKv() = default;

bool EngineKv::can_ever_fit(const Request& r) const {
  return paged_kv::blocks_for(std::size_t{r.prompt_tokens} + r.output_tokens, impl_->block_size) <=
         impl_->pool.num_blocks();
}

std::optional<std::uint32_t> EngineKv::admit(std::size_t index, const Request& r,
                                             std::uint32_t tokens) {
  Impl& m = *impl_;
  auto& p = m.scratch;
  p.clear();
  for (std::uint32_t pos = 0; pos < tokens; ++pos) p.push_back(simulated_token(index, r, pos));
  const std::size_t bs = m.block_size;
  std::size_t adopted = 0;
  std::optional<paged_kv::Sequence> seq;
  if (m.cache) {
    paged_kv::Admission a = m.cache->admit(p);
    if (a.status != paged_kv::Status::kOk) return std::nullopt;
    adopted = a.cached_tokens / bs;
    seq.emplace(std::move(a.sequence));
  } else {
    seq.emplace(m.pool);
    if (seq->append(p) != paged_kv::Status::kOk) return std::nullopt;  // seq frees what it took
  }
  const auto table = seq->block_table();
  // An adopted block counts only while its K/V is really there.
  std::size_t ready = 0;
  while (ready < adopted && m.filled[static_cast<std::size_t>(table[ready])] == bs) ++ready;
  for (std::size_t b = adopted; b < table.size(); ++b)
    m.filled[static_cast<std::size_t>(table[b])] = 0;
  const auto cached = static_cast<std::uint32_t>(ready * bs);
  m.skipped += cached;
  m.live.insert_or_assign(index, Impl::Held{std::move(*seq), &r});
  return cached;
}

bool EngineKv::hold(std::size_t index, std::uint32_t tokens) {
  Impl& m = *impl_;
  Impl::Held& h = m.at(index);
  while (h.seq.length() < tokens) {
    const std::size_t blocks_before = h.seq.block_table().size();
    const auto pos = static_cast<std::uint32_t>(h.seq.length());
    if (h.seq.append(simulated_token(index, *h.req, pos)) != paged_kv::Status::kOk) return false;
    if (h.seq.block_table().size() != blocks_before)
      m.filled[static_cast<std::size_t>(h.seq.block_table().back())] = 0;
  }
  return true;
}

void EngineKv::computed(std::size_t index, std::uint32_t from, std::uint32_t to) {
  if (to <= from) return;
  Impl& m = *impl_;
  const auto table = m.at(index).seq.block_table();
  const std::size_t bs = m.block_size;
  for (std::size_t b = from / bs; b <= (to - 1) / bs && b < table.size(); ++b) {
    std::size_t& f = m.filled[static_cast<std::size_t>(table[b])];
    f = std::max(f, std::min(bs, std::size_t{to} - b * bs));
  }
}

void EngineKv::release(std::size_t index) {
  impl_->live.erase(index);
}

void EngineKv::preempt(std::size_t index) {
  release(index);
  ++impl_->preemptions;
}

EngineKvStats EngineKv::stats() const {
  EngineKvStats s;
  if (impl_->cache) {
    s.block_lookups = impl_->cache->stats().lookups;
    s.block_hits = impl_->cache->stats().hits;
  }
  s.skipped_tokens = impl_->skipped;
  s.preemptions = impl_->preemptions;
  return s;
}

}  // namespace batching
