// A sequence's block table: the logical → physical map (the "page table" of
// PagedAttention). Token T lives in table[T / block_size] at offset
// T % block_size; a new block is taken exactly when T crosses a boundary.
// Sharing is fork(): both tables point at the same blocks, refcounts go up,
// and the first write into a shared block copies it (copy-on-write).
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "paged_kv/block_allocator.hpp"

namespace paged_kv {

enum class Status { kOk, kPoolExhausted };

struct Location {
  std::size_t block_index;  // entry of the block table
  std::size_t offset;       // slot inside that block
};
[[nodiscard]] constexpr Location locate(std::size_t token, std::size_t block_size) {
  return {token / block_size, token % block_size};
}
[[nodiscard]] constexpr std::size_t blocks_for(std::size_t tokens, std::size_t block_size) {
  return (tokens + block_size - 1) / block_size;
}

class Sequence {
 public:
  explicit Sequence(BlockAllocator& pool) : pool_(&pool) {}
  // Adopts blocks the caller already holds one reference to (prefix-cache
  // hits): they cover the first `length` tokens.
  Sequence(BlockAllocator& pool, std::vector<BlockId> blocks, std::size_t length);
  ~Sequence() { release(); }
  Sequence(Sequence&& other) noexcept;
  Sequence& operator=(Sequence&& other) noexcept;
  Sequence(const Sequence&) = delete;
  Sequence& operator=(const Sequence&) = delete;

  // Appends one token; kPoolExhausted leaves the sequence unchanged.
  Status append(Token token);
  // Appends in order and stops at the first failure (length() says how far).
  Status append(std::span<const Token> tokens);
  // Overwrites an existing position, copying its block first if it is shared
  // or indexed by a prefix cache (both are read-only to this sequence).
  Status write(std::size_t pos, Token token);
  [[nodiscard]] Token at(std::size_t pos) const;
  [[nodiscard]] std::vector<Token> tokens() const;

  // A second sequence that shares every block of this one (refcount + 1 each):
  // beam search, parallel sampling, an explicitly shared system prompt.
  [[nodiscard]] Sequence fork() const;
  // Drops this sequence's references, tail block first (so, as in vLLM, the
  // end of a prompt is evicted from a prefix cache before its beginning).
  // Throws DoubleFree only if someone released this sequence's blocks behind
  // its back — a bookkeeping bug; from the destructor that terminates.
  void release();

  [[nodiscard]] std::span<const BlockId> block_table() const { return table_; }
  [[nodiscard]] std::size_t length() const { return length_; }
  [[nodiscard]] std::size_t cow_copies() const { return cow_copies_; }
  [[nodiscard]] BlockAllocator& pool() const { return *pool_; }

 private:
  // Makes table_[index] private to this sequence (copy-on-write).
  Status make_writable(std::size_t index, std::size_t filled);

  BlockAllocator* pool_;
  std::vector<BlockId> table_;
  std::size_t length_ = 0;
  std::size_t cow_copies_ = 0;
};

}  // namespace paged_kv
