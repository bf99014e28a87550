#include "paged_kv/block_size_sweep.hpp"

#include <stdexcept>

#include "gpulab/rng.hpp"
#include "paged_kv/sequence.hpp"

namespace paged_kv {

std::vector<std::size_t> sample_lengths(std::size_t n, std::uint64_t seed, std::size_t prompt_min,
                                        std::size_t prompt_max, std::size_t output_min,
                                        std::size_t output_max) {
  gpulab::Rng rng(seed);
  std::vector<std::size_t> out(n);
  for (auto& len : out)
    len = static_cast<std::size_t>(rng.uniform_int(static_cast<std::int64_t>(prompt_min),
                                                   static_cast<std::int64_t>(prompt_max)) +
                                   rng.uniform_int(static_cast<std::int64_t>(output_min),
                                                   static_cast<std::int64_t>(output_max)));
  return out;
}

std::vector<BlockSizeRow> block_size_sweep(std::span<const std::size_t> lengths,
                                           std::span<const std::size_t> sizes,
                                           std::size_t pool_tokens) {
  if (lengths.empty()) throw std::invalid_argument("the sweep needs at least one sequence length");
  std::vector<BlockSizeRow> rows;
  for (const std::size_t bs : sizes) {
    if (bs == 0) throw std::invalid_argument("block sizes must be at least 1 token");
    if (pool_tokens / bs == 0)
      throw std::invalid_argument("the pool must hold at least one block of each size");
    BlockSizeRow row;
    row.block_size = bs;
    // Fragmentation and table length: each sequence alone in a pool large enough for it.
    std::size_t longest = 0;
    for (const auto len : lengths) longest = std::max(longest, len);
    BlockAllocator roomy(blocks_for(longest, bs), bs);
    double waste = 0, allocated = 0, entries = 0;
    for (const auto len : lengths) {
      Sequence s(roomy);
      for (std::size_t t = 0; t < len; ++t) s.append(static_cast<Token>(t));
      const double slots = static_cast<double>(s.block_table().size() * bs);
      waste += slots - static_cast<double>(len);
      allocated += slots;
      entries += static_cast<double>(s.block_table().size());
    }
    const auto n = static_cast<double>(lengths.size());
    row.waste_tokens_mean = waste / n;
    row.waste_percent = 100.0 * waste / allocated;
    row.table_entries_mean = entries / n;
    // Capacity: the same token budget cut into blocks of this size.
    BlockAllocator pool(pool_tokens / bs, bs);
    std::vector<Sequence> held;
    for (const auto len : lengths) {
      Sequence s(pool);
      bool fits = true;
      for (std::size_t t = 0; t < len && fits; ++t)
        fits = s.append(static_cast<Token>(t)) == Status::kOk;
      if (!fits) break;
      held.push_back(std::move(s));
    }
    row.sequences_fit = held.size();
    rows.push_back(row);
  }
  return rows;
}

}  // namespace paged_kv
