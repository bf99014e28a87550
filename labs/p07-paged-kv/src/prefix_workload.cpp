#include "paged_kv/prefix_workload.hpp"

#include <deque>
#include <stdexcept>
#include <vector>

#include "gpulab/rng.hpp"
#include "paged_kv/prefix_cache.hpp"

namespace paged_kv {

PrefixRun run_prefix_workload(const PrefixWorkload& w, std::size_t pool_blocks,
                              std::size_t block_size) {
  if (w.requests == 0 || w.system_prompts == 0 || w.concurrency == 0)
    throw std::invalid_argument("requests, system prompts and concurrency must be at least 1");
  if (w.user_min == 0 || w.user_min > w.user_max)
    throw std::invalid_argument("need 1 <= user-min <= user-max");
  BlockAllocator pool(pool_blocks, block_size);
  PrefixCache cache(pool);
  gpulab::Rng rng(w.seed);
  std::vector<double> popularity;
  for (std::size_t k = 0; k < w.system_prompts; ++k)
    popularity.push_back(1.0 / static_cast<double>(k + 1));

  PrefixRun run;
  run.pool_blocks = pool_blocks;
  std::deque<Sequence> live;
  std::vector<Token> prompt;
  for (std::size_t r = 0; r < w.requests; ++r) {
    const std::size_t sys = rng.weighted_index(popularity);
    const auto user = static_cast<std::size_t>(rng.uniform_int(
        static_cast<std::int64_t>(w.user_min), static_cast<std::int64_t>(w.user_max)));
    prompt.clear();
    // System prompt k is the same token string in every request; user turns are unique.
    for (std::size_t t = 0; t < w.system_len; ++t)
      prompt.push_back(static_cast<Token>(sys * 1'000'000 + t));
    for (std::size_t t = 0; t < user; ++t) prompt.push_back(-static_cast<Token>(r * 1000 + t) - 1);

    if (live.size() == w.concurrency) live.pop_front();  // the oldest request finished
    Admission a = cache.admit(prompt);
    // Pool full: finish the oldest live requests early until this one fits.
    while (a.status != Status::kOk && !live.empty()) {
      live.pop_front();
      a = cache.admit(prompt);
    }
    if (a.status != Status::kOk) {
      ++run.rejected;
      continue;
    }
    bool fits = true;
    for (std::size_t g = 0; g < w.generated && fits; ++g) {
      const auto token = static_cast<Token>(2'000'000'000 - static_cast<Token>(g));
      while (a.sequence.append(token) != Status::kOk && (fits = !live.empty())) live.pop_front();
    }
    if (!fits) {
      ++run.rejected;
      continue;  // a.sequence releases its blocks
    }
    run.prompt_tokens += prompt.size();
    run.prefill_tokens += prompt.size() - a.cached_tokens;
    live.push_back(std::move(a.sequence));
  }
  run.block_lookups = cache.stats().lookups;
  run.block_hits = cache.stats().hits;
  run.evictions = cache.stats().evictions;
  live.clear();
  return run;
}

}  // namespace paged_kv
