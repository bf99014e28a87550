#include "serving/kv_store.hpp"

#include <algorithm>

namespace serving {

KvStore::KvStore(std::size_t layers, std::size_t num_blocks, std::size_t block_size, std::size_t kv_dim)
    : num_blocks_(num_blocks),
      block_size_(block_size),
      kv_dim_(kv_dim),
      k_(layers * num_blocks * block_size * kv_dim),
      v_(layers * num_blocks * block_size * kv_dim),
      filled_(num_blocks, 0) {}

void KvStore::mark_filled(paged_kv::BlockId block, std::size_t slot) {
  auto& f = filled_[static_cast<std::size_t>(block)];
  f = std::max(f, slot + 1);
}

}  // namespace serving
