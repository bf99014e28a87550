#include "caching_alloc/caching_allocator.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <stdexcept>

namespace caching_alloc {

void CachingAllocator::refuse_request(std::uint64_t bytes) {
  if (bytes == 0) throw std::invalid_argument("allocation of 0 bytes");
  throw std::invalid_argument(
      fmt::format("allocation of {} bytes is larger than the 2^48-byte limit", bytes));
}

void CachingAllocator::refuse_free(std::uint64_t addr, bool known) {
  if (known) throw std::invalid_argument(fmt::format("double free of 0x{:x}", addr));
  throw std::invalid_argument(
      fmt::format("free of 0x{:x}, which this allocator never handed out", addr));
}

CachingAllocator::CachingAllocator(Device& device, AllocatorConfig config)
    : device_(device), config_(config) {
  for (BinTree& bin : bins_) bin = BinTree(config_.fit == FitPolicy::kBestFit);
}

CachingAllocator::~CachingAllocator() {
  // Process teardown: every segment goes back to the driver, live or not.
  for (const auto& [base, seg] : segments_) device_.free(base);
}

gpulab::Expected<Allocation> CachingAllocator::allocate_segment(std::uint64_t rounded,
                                                                std::uint64_t requested, Pool pool,
                                                                StreamId stream) {
  // 3. The driver. 4. On failure: return every unsplit cached segment, retry.
  const std::uint64_t seg_bytes = segment_size(rounded);
  std::optional<std::uint64_t> base = device_.malloc(seg_bytes);
  if (!base) {
    ++stats_.device_malloc_failures;
    ++stats_.alloc_retries;
    if (release_free_segments(0, false) > 0) {
      base = device_.malloc(seg_bytes);
      if (!base) ++stats_.device_malloc_failures;
    }
  }
  if (!base) {
    ++stats_.ooms;
    return gpulab::Error{fmt::format(
        "out of memory: tried to allocate {} bytes ({} byte segment); reserved {}, allocated {}, "
        "device free {}, largest device hole {}",
        requested, seg_bytes, stats_.reserved_bytes, stats_.allocated_bytes, device_.free_bytes(),
        device_.largest_hole())};
  }
  ++stats_.device_mallocs;
  Block* b = block_pool_.make();
  b->addr = *base;
  b->pool = pool;
  resize(b, seg_bytes);
  b->segment = &segments_.emplace(*base, Segment{seg_bytes, pool, 1, 0, tick_}).first->second;
  b->stream = stream;
  blocks_.insert(*base, b);
  stats_.reserved_bytes += seg_bytes;
  stats_.reserved_by_pool[pool_index(pool)] += seg_bytes;
  stats_.peak_reserved_bytes = std::max(stats_.peak_reserved_bytes, stats_.reserved_bytes);
  ++stats_.segments;
  const std::optional<StreamId> reused_from = take(b, false, rounded, requested, stream);
  return gpulab::Expected<Allocation>(std::in_place, b->addr, b->size, requested, stream, false,
                                      reused_from);
}

// The remainder keeps the old stream tag: its memory was last used there.
void CachingAllocator::split(Block* b, std::uint64_t rounded) {
  Block* rest = block_pool_.make();
  rest->addr = b->addr + rounded;
  rest->pool = b->pool;
  resize(rest, b->size - rounded);
  rest->segment = b->segment;
  rest->prev = b;
  rest->next = b->next;
  rest->stream = b->stream;
  if (b->next != nullptr) b->next->prev = rest;
  b->next = rest;
  resize(b, rounded);
  bin_insert(rest);
  blocks_.insert(rest->addr, rest);
  ++rest->segment->blocks;
  ++stats_.splits;
}

// Forgets a block that has been absorbed by a neighbour or returned with its segment.
void CachingAllocator::drop_block(Block* b) {
  blocks_.erase(b->addr);
  block_pool_.release(b);
}

// Absorbs free neighbours (already in bins) into `self`, which is not in a bin
// yet. Returns the merged block.
Block* CachingAllocator::merge_free_neighbours(Block* self) {
  const auto mergeable = [&](const Block* other) {
    return other != nullptr && !other->allocated && other->stream == self->stream;
  };
  if (mergeable(self->next)) {
    Block* n = self->next;
    bin_erase(n);
    resize(self, self->size + n->size);
    self->next = n->next;
    if (n->next != nullptr) n->next->prev = self;
    drop_block(n);
    --self->segment->blocks;
    ++stats_.merges;
  }
  if (mergeable(self->prev)) {
    Block* p = self->prev;
    bin_erase(p);
    resize(p, p->size + self->size);
    p->next = self->next;
    if (self->next != nullptr) self->next->prev = p;
    --p->segment->blocks;
    drop_block(self);
    ++stats_.merges;
    return p;
  }
  return self;
}

std::size_t CachingAllocator::release_free_segments(std::uint64_t min_idle_ticks,
                                                    bool count_as_idle) {
  std::size_t released = 0;
  for (auto it = segments_.begin(); it != segments_.end();) {
    const Segment& seg = it->second;
    // Only an unsplit, free segment can go back: the driver frees whole segments.
    if (seg.blocks != 1 || seg.live_blocks != 0 || tick_ - seg.idle_since < min_idle_ticks) {
      ++it;
      continue;
    }
    const std::uint64_t base = it->first;
    Block* b = blocks_.find(base);
    bin_erase(b);
    drop_block(b);
    device_.free(base);
    stats_.reserved_bytes -= seg.size;
    stats_.reserved_by_pool[pool_index(seg.pool)] -= seg.size;
    --stats_.segments;
    ++stats_.device_frees;
    if (count_as_idle) ++stats_.idle_releases;
    it = segments_.erase(it);
    ++released;
  }
  return released;
}

std::size_t CachingAllocator::empty_cache() {
  return release_free_segments(0, false);
}

void CachingAllocator::tick() {
  ++tick_;
  if (config_.release_idle_after > 0) release_free_segments(config_.release_idle_after, true);
}

std::uint64_t CachingAllocator::largest_cached_block() const {
  // The largest block sits in the highest non-empty class of some pool: only
  // that class is scanned (or, with size-ordered best-fit bins, read off its end).
  std::uint64_t best = 0;
  for (int p = 0; p < kPools; ++p) {
    const std::uint32_t classes = nonempty_[static_cast<std::size_t>(p)];
    if (classes == 0) continue;
    const int c = 31 - std::countl_zero(classes);
    const BinTree& bin =
        bins_[static_cast<std::size_t>(p) * kBinStride + static_cast<std::size_t>(c)];
    if (config_.fit == FitPolicy::kBestFit) {
      best = std::max(best, bin.last()->size);
    } else {
      for (const Block* b = bin.first(); b != nullptr; b = BinTree::next(b)) {
        best = std::max(best, b->size);
      }
    }
  }
  return best;
}

std::size_t CachingAllocator::cached_blocks() const {
  std::size_t n = 0;
  for (const BinTree& bin : bins_) n += bin.size();
  return n;
}

bool CachingAllocator::owns_live(std::uint64_t addr) const {
  const Block* b = blocks_.find(addr);
  return b != nullptr && b->allocated;
}

std::string CachingAllocator::check_invariants() const {
  std::uint64_t reserved = 0;
  std::uint64_t allocated = 0;
  std::uint64_t in_bins = 0;
  std::size_t all_blocks = 0;
  for (const auto& [base, seg] : segments_) {
    reserved += seg.size;
    // Walk the segment's blocks: contiguous, linked both ways, sizes add up,
    // each one findable by its address.
    const Block* prev = nullptr;
    std::uint64_t covered = 0;
    std::uint32_t blocks = 0;
    std::uint32_t live = 0;
    for (const Block* b = blocks_.find(base); b != nullptr || covered < seg.size; b = b->next) {
      const std::uint64_t at = base + covered;
      if (b == nullptr) return fmt::format("segment 0x{:x}: missing block 0x{:x}", base, at);
      if (b->addr != at) return fmt::format("block 0x{:x}: not contiguous", b->addr);
      if (blocks_.find(at) != b) return fmt::format("block 0x{:x}: not found by its address", at);
      if (b->prev != prev) return fmt::format("block 0x{:x}: broken prev link", at);
      if (b->segment != &seg) return fmt::format("block 0x{:x}: wrong segment", at);
      covered += b->size;
      ++blocks;
      if (b->allocated) {
        ++live;
        allocated += b->size;
      } else {
        const BinTree& bin =
            bins_[pool_index(b->pool) * kBinStride + static_cast<std::size_t>(size_class(b->size))];
        if (!bin.contains(b)) return fmt::format("free block 0x{:x} is not in its bin", at);
        ++in_bins;
      }
      prev = b;
      if (covered > seg.size) break;
    }
    if (covered != seg.size)
      return fmt::format("segment 0x{:x}: blocks cover {} of {} bytes", base, covered, seg.size);
    if (blocks != seg.blocks || live != seg.live_blocks) {
      return fmt::format("segment 0x{:x}: block counts out of date", base);
    }
    all_blocks += blocks;
  }
  for (std::size_t i = 0; i < bins_.size(); ++i) {
    if (std::string broken = bins_[i].check(); !broken.empty()) return broken;
    const bool marked = (nonempty_[i / kBinStride] >> (i % kBinStride)) & 1u;
    if (marked == bins_[i].empty()) return fmt::format("bin {}: non-empty bit out of date", i);
  }
  if (reserved != stats_.reserved_bytes) {
    return fmt::format("reserved {} != sum of segments {}", stats_.reserved_bytes, reserved);
  }
  if (allocated != stats_.allocated_bytes) {
    return fmt::format("allocated {} != sum of live blocks {}", stats_.allocated_bytes, allocated);
  }
  if (stats_.reserved_bytes < stats_.allocated_bytes) return "reserved < allocated";
  if (in_bins != cached_blocks()) return "a bin holds a block that is not free";
  if (all_blocks != blocks_.size()) return "the address map holds a block of no segment";
  if (stats_.segments != segments_.size()) return "segment count out of date";
  return {};
}

}  // namespace caching_alloc
