#include "paged_kv/memory_regimes.hpp"

#include <algorithm>
#include <stdexcept>

#include "paged_kv/block_allocator.hpp"
#include "paged_kv/sequence.hpp"

namespace paged_kv {
namespace {

// Token ids are arbitrary; making them depend on (request, position) lets the
// checks see whose data a block holds.
Token token_of(std::size_t request, std::size_t pos) {
  return static_cast<Token>(request * 100'000 + pos);
}

std::vector<std::pair<int, int>> live_refcounts(const BlockAllocator& pool) {
  std::vector<std::pair<int, int>> out;
  for (std::size_t b = 0; b < pool.num_blocks(); ++b) {
    const auto id = static_cast<BlockId>(b);
    if (pool.refcount(id) > 0) out.emplace_back(id, pool.refcount(id));
  }
  return out;
}

std::vector<int> table_of(const Sequence& s) {
  return {s.block_table().begin(), s.block_table().end()};
}

}  // namespace

std::size_t fit_contiguous(std::size_t pool_blocks, std::size_t block_size, std::size_t max_len) {
  BlockAllocator pool(pool_blocks, block_size);
  const std::size_t per_seq = blocks_for(max_len, block_size);
  if (per_seq == 0) throw std::invalid_argument("max_len must be at least one token");
  std::vector<Sequence> admitted;
  for (;;) {
    // All-or-nothing reservation: a contiguous region of max_len slots.
    if (pool.free_blocks() < per_seq) return admitted.size();
    std::vector<BlockId> region;
    for (std::size_t i = 0; i < per_seq; ++i) region.push_back(*pool.allocate());
    admitted.emplace_back(pool, std::move(region), per_seq * block_size);
  }
}

std::size_t fit_paged(std::size_t pool_blocks, std::size_t block_size, std::size_t actual_len) {
  if (actual_len == 0) throw std::invalid_argument("actual_len must be at least one token");
  BlockAllocator pool(pool_blocks, block_size);
  std::vector<Sequence> admitted;
  for (std::size_t r = 0;; ++r) {
    Sequence s(pool);
    for (std::size_t t = 0; t < actual_len; ++t)
      if (s.append(token_of(r, t)) != Status::kOk)
        return admitted.size();  // s frees its partial blocks
    admitted.push_back(std::move(s));
  }
}

SharingResult prefix_sharing(std::size_t pool_blocks, std::size_t block_size, std::size_t requests,
                             std::size_t prefix_len, std::size_t generated_len) {
  SharingResult out;
  {
    BlockAllocator pool(pool_blocks, block_size);
    std::vector<Sequence> seqs;
    for (std::size_t r = 0; r < requests && out.fit_without_sharing; ++r) {
      Sequence s(pool);
      for (std::size_t t = 0; t < prefix_len + generated_len && out.fit_without_sharing; ++t)
        out.fit_without_sharing = s.append(token_of(t < prefix_len ? 0 : r + 1, t)) == Status::kOk;
      if (out.fit_without_sharing) ++out.served_without_sharing;
      seqs.push_back(std::move(s));
    }
    out.blocks_without_sharing = pool.used_blocks();
  }
  {
    BlockAllocator pool(pool_blocks, block_size);
    Sequence prompt(pool);
    for (std::size_t t = 0; t < prefix_len && out.fit_with_sharing; ++t)
      out.fit_with_sharing = prompt.append(token_of(0, t)) == Status::kOk;
    std::vector<Sequence> seqs;
    for (std::size_t r = 0; r < requests && out.fit_with_sharing; ++r) {
      Sequence s = prompt.fork();
      for (std::size_t t = prefix_len; t < prefix_len + generated_len && out.fit_with_sharing; ++t)
        out.fit_with_sharing = s.append(token_of(r + 1, t)) == Status::kOk;
      if (out.fit_with_sharing) ++out.served_with_sharing;
      seqs.push_back(std::move(s));
    }
    out.blocks_with_sharing = pool.used_blocks();
    out.shared_with_sharing = pool.shared_blocks();
  }
  return out;
}

bool CowTrace::all_pass() const {
  return !checks.empty() &&
         std::all_of(checks.begin(), checks.end(), [](const CowCheck& c) { return c.pass; });
}

CowTrace cow_divergence(std::size_t block_size, std::size_t prefix_len) {
  if (prefix_len == 0 || prefix_len % block_size == 0)
    throw std::invalid_argument("the COW scenario needs a prefix that ends inside a block");
  CowTrace trace{block_size, prefix_len, {}, {}};
  const std::size_t blocks = blocks_for(prefix_len, block_size) + 1;
  BlockAllocator pool(blocks, block_size);
  auto step = [&](std::string what, const Sequence* a, const Sequence& b) {
    trace.steps.push_back({std::move(what), a ? table_of(*a) : std::vector<int>{}, table_of(b),
                           live_refcounts(pool), pool.used_blocks()});
  };
  auto check = [&](std::string what, bool pass) {
    trace.checks.push_back({std::move(what), pass});
  };

  Sequence a(pool);
  for (std::size_t t = 0; t < prefix_len; ++t) a.append(token_of(1, t));
  Sequence b = a.fork();
  const std::vector<int> shared = table_of(a);
  step("A forked into B (prompt shared)", &a, b);
  check("sharing copies nothing: physical blocks == blocks of one prompt",
        pool.used_blocks() == shared.size());
  check("every shared block has refcount 2",
        std::all_of(shared.begin(), shared.end(), [&](int id) { return pool.refcount(id) == 2; }));

  const std::vector<Token> a_before = a.tokens();
  const bool appended = b.append(token_of(2, prefix_len)) == Status::kOk;
  step("B appends a token (write into shared partial block)", &a, b);
  const int last_shared = shared.back();
  const int fresh = b.block_table().back();
  check("B's append forked exactly one block",
        appended && b.cow_copies() == 1 && fresh != last_shared);
  check("full shared blocks stay shared (refcount 2)",
        std::all_of(shared.begin(), shared.end() - 1,
                    [&](int id) { return pool.refcount(id) == 2; }));
  check("old partial block refcount 2 -> 1, new block refcount 1",
        pool.refcount(last_shared) == 1 && pool.refcount(fresh) == 1);
  check("A's tokens unchanged by B's write", a.tokens() == a_before);
  bool b_ok = b.length() == prefix_len + 1 && b.at(prefix_len) == token_of(2, prefix_len);
  for (std::size_t t = 0; t < prefix_len; ++t) b_ok = b_ok && b.at(t) == a_before[t];
  check("B sees the shared prompt plus its own token", b_ok);

  a.release();
  step("A freed", nullptr, b);
  check("A's private block reclaimed (refcount 0, back on the free list)",
        pool.refcount(last_shared) == 0 &&
            pool.free_blocks() + pool.used_blocks() == pool.num_blocks());
  check("blocks B still uses keep refcount 1",
        std::all_of(b.block_table().begin(), b.block_table().end(),
                    [&](int id) { return pool.refcount(id) == 1; }));
  return trace;
}

}  // namespace paged_kv
