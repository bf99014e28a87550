#include "serving/kv_store.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "gpulab/errors.hpp"

namespace serving {

namespace hal = gpulab::hal;

KvStore::KvStore(const hal::Backend& backend, std::size_t layers, std::size_t num_blocks,
                 std::size_t block_size, std::size_t kv_dim)
    : backend_(&backend),
      num_blocks_(num_blocks),
      block_size_(block_size),
      kv_dim_(kv_dim),
      filled_(num_blocks, 0) {
  const std::size_t bytes = num_blocks * block_size * kv_dim * sizeof(float);
  for (std::size_t l = 0; l < layers; ++l)
    for (auto* pool : {&k_, &v_}) {
      auto buf = backend.allocate(bytes);
      if (!buf)
        throw gpulab::RunError(
            fmt::format("{}: KV pool of {} bytes: {}", backend.name(), bytes, buf.error().message));
      pool->push_back(std::move(buf.value()));
    }
}

void KvStore::write(std::size_t layer, paged_kv::BlockId block, std::size_t slot, const float* key,
                    const float* value) {
  const std::size_t bytes = kv_dim_ * sizeof(float);
  const std::size_t offset = (static_cast<std::size_t>(block) * block_size_ + slot) * bytes;
  for (auto [pool, src] : {std::pair{&k_, key}, std::pair{&v_, value}})
    if (const auto s = backend_->upload((*pool)[layer], src, bytes, offset); !s.ok())
      throw gpulab::RunError(fmt::format("{}: K/V write: {}", backend_->name(), hal::describe(s)));
}

void KvStore::mark_filled(paged_kv::BlockId block, std::size_t slot) {
  auto& f = filled_[static_cast<std::size_t>(block)];
  f = std::max(f, slot + 1);
}

}  // namespace serving
