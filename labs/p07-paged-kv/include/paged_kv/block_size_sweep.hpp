// The block-size trade-off over a realistic spread of sequence lengths:
// smaller blocks waste less of their last block (internal fragmentation, at
// most block_size - 1 tokens per sequence) but need longer block tables — one
// more indirection per block for the attention kernel to follow.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace paged_kv {

struct BlockSizeRow {
  std::size_t block_size = 0;
  double waste_tokens_mean = 0;   // allocated but unused slots per sequence
  double waste_percent = 0;       // of all allocated slots
  double table_entries_mean = 0;  // block-table length per sequence
  std::size_t sequences_fit = 0;  // of the lengths, in order, before a pool of pool_tokens runs dry
};

// Lengths: prompt U{prompt_min..prompt_max} + output U{output_min..output_max}.
std::vector<std::size_t> sample_lengths(std::size_t n, std::uint64_t seed,
                                        std::size_t prompt_min = 64, std::size_t prompt_max = 1024,
                                        std::size_t output_min = 10, std::size_t output_max = 300);
// Measured by allocating every sequence from a BlockAllocator of each block size.
std::vector<BlockSizeRow> block_size_sweep(std::span<const std::size_t> lengths,
                                           std::span<const std::size_t> sizes,
                                           std::size_t pool_tokens);

}  // namespace paged_kv
