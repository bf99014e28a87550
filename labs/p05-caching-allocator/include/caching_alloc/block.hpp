// The allocator's records: a segment (one driver allocation) and the blocks it
// is carved into. Blocks are linked to their address neighbours inside the
// segment and, while free, into a bin tree; every link is a pointer inside the
// record itself, so moving a block between "live" and "cached" allocates nothing.
#pragma once

#include <cstdint>

#include "caching_alloc/size_policy.hpp"

namespace caching_alloc {

using StreamId = std::uint32_t;

struct Segment {
  std::uint64_t size = 0;
  Pool pool = Pool::kSmall;
  std::uint32_t blocks = 0;
  std::uint32_t live_blocks = 0;
  std::uint64_t idle_since = 0;  // tick at which live_blocks became 0
};

struct Block {
  std::uint64_t addr = 0;
  std::uint64_t size = 0;
  std::uint64_t requested = 0;
  Segment* segment = nullptr;  // the segment it was carved from (map nodes never move)
  Block* prev = nullptr;       // neighbours inside the segment, by address
  Block* next = nullptr;
  // Bin-tree links, meaningful only while the block is free (see bin_tree.hpp).
  Block* parent = nullptr;
  Block* left = nullptr;
  Block* right = nullptr;
  bool red = false;
  // The bin of its pool and size class (pool x kBinStride + class), the one it
  // sits in while free; set with the size (CachingAllocator::resize).
  std::uint16_t bin = 0;
  StreamId stream = 0;    // the stream it was last allocated on
  Pool pool = Pool::kSmall;
  bool allocated = false;
};

}  // namespace caching_alloc
