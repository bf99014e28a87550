// KV memory the way P12's serving engine holds it (labs/p12-serving, Engine),
// so that batching-sim can predict that engine like with like. Unlike
// PagedPrefixKv, which reserves a request's whole KV (prompt + every output
// token) at admission, a request here takes the blocks of the tokens it holds
// when admitted (its prompt, plus what it generated before a preemption), one
// more block whenever a decoded token crosses a block boundary, and when the
// pool is dry at that moment the simulator preempts the most recently admitted
// sequence: its blocks go back and it is recomputed later, keeping the tokens
// it emitted. With the prefix cache on, admission adopts the cached full blocks
// of an earlier identical prefix (paged-kv's PrefixCache), but counts only the
// blocks whose K/V has really been computed: a block indexed by a request still
// prefilling it is recomputed, as the engine does.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>

#include "batching/request.hpp"

namespace batching {

struct EngineKvStats {
  std::uint64_t block_lookups = 0, block_hits = 0;  // full prompt blocks looked up / adopted
  std::uint64_t skipped_tokens = 0;  // prefill tokens not computed thanks to computed hits
  std::uint64_t preemptions = 0;
};

class EngineKv {
 public:
  // Throws std::invalid_argument for a zero pool or block size.
  EngineKv(std::size_t pool_blocks, std::size_t block_size, bool prefix_cache);
  ~EngineKv();
  EngineKv(const EngineKv&) = delete;
  EngineKv& operator=(const EngineKv&) = delete;

  // Whether the request could run alone in the pool (prompt + output).
  [[nodiscard]] bool can_ever_fit(const Request& r) const;
  // Takes the blocks of request `index`'s first `tokens` tokens (prompt, then
  // generated). Returns how many leading tokens already have computed K/V (prefix
  // cache hits; always fewer than `tokens`), or nullopt, holding nothing, when
  // the pool is short.
  std::optional<std::uint32_t> admit(std::size_t index, const Request& r, std::uint32_t tokens);
  // Grows `index`'s sequence to `tokens` slots; false when the pool is dry
  // (what was appended stays).
  bool hold(std::size_t index, std::uint32_t tokens);
  // The K/V of positions [from, to) of `index` is computed now.
  void computed(std::size_t index, std::uint32_t from, std::uint32_t to);
  // Releases `index`'s blocks (finished); cached blocks stay findable.
  void release(std::size_t index);
  // Releases `index`'s blocks and counts a preemption.
  void preempt(std::size_t index);
  [[nodiscard]] EngineKvStats stats() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The token at position `pos` of request `index`, for prefix hashing: system
// prompt k is the same token string in every request that uses it; every other
// token is unique to its request.
[[nodiscard]] std::int32_t simulated_token(std::size_t index, const Request& r, std::uint32_t pos);

}  // namespace batching
