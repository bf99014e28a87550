// The curriculum's three regimes, measured by really allocating from a pool:
// naive contiguous reservation, paged allocate-on-demand, and paged with an
// explicitly shared system prompt — plus a traced copy-on-write scenario.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace paged_kv {

// Sequences admitted until the pool refuses: each reserves blocks for max_len
// up front (what a contiguous allocator must do, not knowing the final length).
std::size_t fit_contiguous(std::size_t pool_blocks, std::size_t block_size, std::size_t max_len);
// Sequences admitted until the pool refuses: each appends actual_len tokens,
// taking blocks only as it grows.
std::size_t fit_paged(std::size_t pool_blocks, std::size_t block_size, std::size_t actual_len);

struct SharingResult {
  std::size_t blocks_without_sharing = 0;  // physical blocks used, every request owns its prompt
  std::size_t blocks_with_sharing = 0;     // physical blocks used, one shared copy of the prompt
  bool fit_without_sharing = true;         // false: the pool ran out (the count is then a floor)
  bool fit_with_sharing = true;
  std::size_t served_without_sharing = 0;  // requests that fit completely
  std::size_t served_with_sharing = 0;
  std::size_t shared_with_sharing = 0;  // blocks with refcount > 1 while every request is live
};
SharingResult prefix_sharing(std::size_t pool_blocks, std::size_t block_size, std::size_t requests,
                             std::size_t prefix_len, std::size_t generated_len);

// One step of the copy-on-write trace: both tables and every live refcount.
struct CowStep {
  std::string what;
  std::vector<int> table_a;  // empty once A is freed
  std::vector<int> table_b;
  std::vector<std::pair<int, int>> refcounts;  // (block, refcount) for live blocks
  std::size_t physical = 0;
};
struct CowCheck {
  std::string what;
  bool pass = false;
};
struct CowTrace {
  std::size_t block_size = 0;
  std::size_t prefix_len = 0;
  std::vector<CowStep> steps;
  std::vector<CowCheck> checks;
  [[nodiscard]] bool all_pass() const;
};
// A and B share a prefix_len-token prompt whose last block is partial; B
// appends one token (a write into the shared block → fork), then A is freed.
CowTrace cow_divergence(std::size_t block_size, std::size_t prefix_len);

}  // namespace paged_kv
