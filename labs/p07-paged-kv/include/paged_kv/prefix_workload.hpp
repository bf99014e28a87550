// A chat-like workload for the automatic prefix cache: every request is one
// of a few system prompts (popularity ~ 1/rank, Zipf s=1) followed by its own
// user turn and generation, with a bounded number of requests alive at once.
#pragma once

#include <cstddef>
#include <cstdint>

namespace paged_kv {

struct PrefixWorkload {
  std::size_t requests = 2000;
  std::size_t system_prompts = 32;
  std::size_t system_len = 1024;
  std::size_t user_min = 16, user_max = 256;
  std::size_t generated = 64;
  std::size_t concurrency = 16;  // requests holding KV at once
  std::uint64_t seed = 1;
};

struct PrefixRun {
  std::size_t pool_blocks = 0;
  std::uint64_t prompt_tokens = 0;   // prompt tokens of admitted requests
  std::uint64_t prefill_tokens = 0;  // of those, computed (not served from the cache)
  std::uint64_t block_lookups = 0;
  std::uint64_t block_hits = 0;
  std::uint64_t evictions = 0;
  std::size_t rejected = 0;  // did not fit even with nothing else alive
  [[nodiscard]] double hit_rate() const {
    return block_lookups ? static_cast<double>(block_hits) / static_cast<double>(block_lookups) : 0;
  }
  [[nodiscard]] double prefill_saved() const {
    return prompt_tokens
               ? 1.0 - static_cast<double>(prefill_tokens) / static_cast<double>(prompt_tokens)
               : 0;
  }
};

// Runs the workload through a pool of pool_blocks blocks with an automatic
// prefix cache. Throws std::invalid_argument for an empty or inconsistent workload.
PrefixRun run_prefix_workload(const PrefixWorkload& w, std::size_t pool_blocks,
                              std::size_t block_size);

}  // namespace paged_kv
