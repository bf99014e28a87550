#include "paged_kv/sequence.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <stdexcept>
#include <utility>

namespace paged_kv {

Sequence::Sequence(BlockAllocator& pool, std::vector<BlockId> blocks, std::size_t length)
    : pool_(&pool), table_(std::move(blocks)), length_(length) {
  if (blocks_for(length, pool.block_size()) != table_.size())
    throw std::invalid_argument(
        fmt::format("{} blocks cannot hold exactly {} tokens", table_.size(), length));
}

Sequence::Sequence(Sequence&& other) noexcept
    : pool_(other.pool_),
      table_(std::exchange(other.table_, {})),
      length_(std::exchange(other.length_, 0)),
      cow_copies_(std::exchange(other.cow_copies_, 0)) {}

Sequence& Sequence::operator=(Sequence&& other) noexcept {
  if (this != &other) {
    release();
    pool_ = other.pool_;
    table_ = std::exchange(other.table_, {});
    length_ = std::exchange(other.length_, 0);
    cow_copies_ = std::exchange(other.cow_copies_, 0);
  }
  return *this;
}

Status Sequence::make_writable(std::size_t index, std::size_t filled) {
  const BlockId old = table_[index];
  if (pool_->refcount(old) == 1 && !pool_->is_cached(old)) return Status::kOk;
  const auto fresh = pool_->allocate();
  if (!fresh) return Status::kPoolExhausted;
  const auto src = pool_->slots(old);
  std::copy_n(src.begin(), filled, pool_->slots(*fresh).begin());
  pool_->release(old);
  table_[index] = *fresh;
  ++cow_copies_;
  return Status::kOk;
}

Status Sequence::append(Token token) {
  const auto [index, offset] = locate(length_, pool_->block_size());
  if (offset == 0) {  // exactly at a boundary: the table grows by one block
    const auto block = pool_->allocate();
    if (!block) return Status::kPoolExhausted;
    table_.push_back(*block);
  } else if (make_writable(index, offset) != Status::kOk) {
    return Status::kPoolExhausted;
  }
  pool_->slots(table_[index])[offset] = token;
  ++length_;
  return Status::kOk;
}

Status Sequence::append(std::span<const Token> tokens) {
  for (const Token t : tokens)
    if (append(t) != Status::kOk) return Status::kPoolExhausted;
  return Status::kOk;
}

Status Sequence::write(std::size_t pos, Token token) {
  if (pos >= length_)
    throw std::out_of_range(
        fmt::format("write at {} past the end of a {}-token sequence", pos, length_));
  const auto [index, offset] = locate(pos, pool_->block_size());
  const std::size_t filled = std::min(pool_->block_size(), length_ - index * pool_->block_size());
  if (make_writable(index, filled) != Status::kOk) return Status::kPoolExhausted;
  pool_->slots(table_[index])[offset] = token;
  return Status::kOk;
}

Token Sequence::at(std::size_t pos) const {
  if (pos >= length_)
    throw std::out_of_range(
        fmt::format("read at {} past the end of a {}-token sequence", pos, length_));
  const auto [index, offset] = locate(pos, pool_->block_size());
  return pool_->slots(table_[index])[offset];
}

std::vector<Token> Sequence::tokens() const {
  std::vector<Token> out;
  out.reserve(length_);
  for (std::size_t i = 0; i < length_; ++i) out.push_back(at(i));
  return out;
}

Sequence Sequence::fork() const {
  for (const BlockId b : table_) pool_->share(b);
  return Sequence(*pool_, table_, length_);
}

void Sequence::release() {
  for (auto it = table_.rbegin(); it != table_.rend(); ++it) pool_->release(*it);
  table_.clear();
  length_ = 0;
}

}  // namespace paged_kv
