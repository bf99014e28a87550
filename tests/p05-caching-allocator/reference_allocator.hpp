// The allocator as it was before its hot path was rebuilt (commit ddd9043):
// std::set bins with (key, addr) order, an unordered_map of blocks, a std::map
// of segments. Kept only as the oracle of reference_allocator_test.cpp, which
// runs it and CachingAllocator side by side and demands identical answers.
// Not optimised and not to be: its value is that it is the old, plain code.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <map>
#include <memory_resource>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include "caching_alloc/caching_allocator.hpp"

namespace caching_alloc::testing {

class ReferenceAllocator {
 public:
  explicit ReferenceAllocator(Device& device, AllocatorConfig config = {});
  ~ReferenceAllocator();
  ReferenceAllocator(const ReferenceAllocator&) = delete;
  ReferenceAllocator& operator=(const ReferenceAllocator&) = delete;

  // The four-step path: bin hit -> split a larger cached block -> device
  // malloc -> flush the cache and retry. An error only when all four fail.
  // Throws std::invalid_argument for 0 bytes or more than kMaxRequest.
  gpulab::Expected<Allocation> allocate(std::uint64_t bytes, StreamId stream = 0);
  // Back to a bin; the driver never sees it. Throws std::invalid_argument for
  // an address this allocator did not hand out or a double free (state unchanged).
  void free(std::uint64_t addr);

  // torch.cuda.empty_cache(): returns every cached *unsplit* segment to the
  // driver (a split one cannot be: the driver frees whole segments only).
  // Returns how many segments went back.
  std::size_t empty_cache();
  // One iteration of the caller's loop; runs the idle-release policy.
  void tick();

  [[nodiscard]] const AllocatorStats& stats() const { return stats_; }
  [[nodiscard]] const AllocatorConfig& config() const { return config_; }
  [[nodiscard]] std::uint64_t largest_cached_block() const;
  [[nodiscard]] std::size_t cached_blocks() const;
  [[nodiscard]] bool owns_live(std::uint64_t addr) const;
  [[nodiscard]] const Device& device() const { return device_; }

 private:
  static constexpr std::uint64_t kNone = ~std::uint64_t{0};

  struct Segment;
  struct Block {
    std::uint64_t size = 0;
    std::uint64_t requested = 0;
    Segment* segment = nullptr;  // the segment it was carved from (map nodes never move)
    std::uint64_t prev = kNone;  // neighbours inside the segment
    std::uint64_t next = kNone;
    StreamId stream = 0;  // the stream it was last allocated on
    Pool pool = Pool::kSmall;
    bool allocated = false;
  };
  struct Segment {
    std::uint64_t size = 0;
    Pool pool = Pool::kSmall;
    std::uint32_t blocks = 0;
    std::uint32_t live_blocks = 0;
    std::uint64_t idle_since = 0;  // tick at which live_blocks became 0
  };
  // Bin entries order by (key, addr): key = 0 gives address order (first
  // fit), key = size gives size order (best fit).
  struct BinEntry {
    std::uint64_t key;
    std::uint64_t addr;
    std::uint64_t size;
    StreamId stream;
    bool operator<(const BinEntry& o) const { return key != o.key ? key < o.key : addr < o.addr; }
  };
  // Set nodes come from a pool: a bin insert on the hot path is a free-list pop, not malloc.
  using Bin = std::pmr::set<BinEntry>;

  Bin& bin_for(Pool pool, std::uint64_t size);
  void bin_insert(std::uint64_t addr, const Block& b);
  void bin_erase(std::uint64_t addr, const Block& b);
  struct Hit {
    Bin* bin;
    Bin::iterator it;
  };
  [[nodiscard]] std::optional<Hit> find_cached(Pool pool, std::uint64_t rounded, StreamId stream,
                                               bool same_stream);
  // `hit` is where the block sits in its bin; nullopt for a fresh segment.
  Allocation take(std::uint64_t addr, std::optional<Hit> hit, std::uint64_t rounded,
                  std::uint64_t requested, StreamId stream);
  std::uint64_t merge_free_neighbours(std::uint64_t addr);
  std::size_t release_free_segments(std::uint64_t min_idle_ticks, bool count_as_idle);
  void note_peaks();

  Device& device_;
  AllocatorConfig config_;
  AllocatorStats stats_;
  std::uint64_t tick_ = 0;
  std::unordered_map<std::uint64_t, Block> blocks_;  // address -> block, live and cached
  std::map<std::uint64_t, Segment> segments_;        // base address -> segment
  std::pmr::unsynchronized_pool_resource node_pool_;
  std::vector<Bin> bins_;  // kPools x kSizeClasses
};

namespace reference_detail {
constexpr std::size_t pool_index(Pool p) {
  return static_cast<std::size_t>(p);
}
}  // namespace reference_detail
using reference_detail::pool_index;

inline ReferenceAllocator::ReferenceAllocator(Device& device, AllocatorConfig config)
    : device_(device), config_(config) {
  bins_.reserve(kPools * kSizeClasses);
  for (int i = 0; i < kPools * kSizeClasses; ++i) bins_.emplace_back(&node_pool_);
}

inline ReferenceAllocator::~ReferenceAllocator() {
  // Process teardown: every segment goes back to the driver, live or not.
  for (const auto& [base, seg] : segments_) device_.free(base);
}

inline ReferenceAllocator::Bin& ReferenceAllocator::bin_for(Pool pool, std::uint64_t size) {
  return bins_[pool_index(pool) * kSizeClasses + static_cast<std::size_t>(size_class(size))];
}

inline void ReferenceAllocator::bin_insert(std::uint64_t addr, const Block& b) {
  const std::uint64_t key = config_.fit == FitPolicy::kBestFit ? b.size : 0;
  bin_for(b.pool, b.size).insert(BinEntry{key, addr, b.size, b.stream});
}

inline void ReferenceAllocator::bin_erase(std::uint64_t addr, const Block& b) {
  const std::uint64_t key = config_.fit == FitPolicy::kBestFit ? b.size : 0;
  bin_for(b.pool, b.size).erase(BinEntry{key, addr, b.size, b.stream});
}

inline std::optional<ReferenceAllocator::Hit> ReferenceAllocator::find_cached(Pool pool,
                                                                              std::uint64_t rounded,
                                                                              StreamId stream,
                                                                              bool same_stream) {
  const auto stream_ok = [&](const BinEntry& e) { return (e.stream == stream) == same_stream; };
  for (int c = size_class(rounded); c < kSizeClasses; ++c) {
    Bin& bin = bins_[pool_index(pool) * kSizeClasses + static_cast<std::size_t>(c)];
    if (bin.empty()) continue;
    if (config_.fit == FitPolicy::kBestFit) {
      // Size-ordered: everything from lower_bound on fits; the first that
      // passes the stream test is the smallest.
      for (auto it = bin.lower_bound(BinEntry{rounded, 0, 0, 0}); it != bin.end(); ++it) {
        if (stream_ok(*it)) return Hit{&bin, it};
      }
    } else {
      for (auto it = bin.begin(); it != bin.end(); ++it) {
        if (it->size >= rounded && stream_ok(*it)) return Hit{&bin, it};
      }
    }
  }
  return std::nullopt;
}

inline gpulab::Expected<Allocation> ReferenceAllocator::allocate(std::uint64_t bytes,
                                                                 StreamId stream) {
  if (bytes == 0) throw std::invalid_argument("allocation of 0 bytes");
  if (bytes > kMaxRequest) {
    throw std::invalid_argument(
        fmt::format("allocation of {} bytes is larger than the 2^48-byte limit", bytes));
  }
  const std::uint64_t rounded = round_size(bytes);
  const Pool pool = pool_for(rounded);

  // 1+2. A cached block of this stream; else (if allowed) one of another stream.
  std::optional<Hit> hit = find_cached(pool, rounded, stream, true);
  if (!hit && config_.cross_stream == CrossStreamPolicy::kEventEdge) {
    hit = find_cached(pool, rounded, stream, false);
  }
  if (hit) return take(hit->it->addr, hit, rounded, bytes, stream);

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
        bytes, seg_bytes, stats_.reserved_bytes, stats_.allocated_bytes, device_.free_bytes(),
        device_.largest_hole())};
  }
  ++stats_.device_mallocs;
  Block b;
  b.size = seg_bytes;
  b.segment = &segments_.emplace(*base, Segment{seg_bytes, pool, 1, 0, tick_}).first->second;
  b.stream = stream;
  b.pool = pool;
  blocks_.emplace(*base, b);
  stats_.reserved_bytes += seg_bytes;
  stats_.reserved_by_pool[pool_index(pool)] += seg_bytes;
  ++stats_.segments;
  return take(*base, std::nullopt, rounded, bytes, stream);
}

inline Allocation ReferenceAllocator::take(std::uint64_t addr, std::optional<Hit> hit,
                                           std::uint64_t rounded, std::uint64_t requested,
                                           StreamId stream) {
  const bool from_cache = hit.has_value();
  if (hit) hit->bin->erase(hit->it);
  Block& b = blocks_.at(addr);
  Allocation out;
  if (b.stream != stream) {
    out.reused_from_stream = b.stream;
    ++stats_.cross_stream_syncs;
  }
  if (should_split(b.pool, b.size, rounded)) {
    // The remainder keeps the old stream tag: its memory was last used there.
    Block rest;
    rest.size = b.size - rounded;
    rest.segment = b.segment;
    rest.prev = addr;
    rest.next = b.next;
    rest.stream = b.stream;
    rest.pool = b.pool;
    const std::uint64_t rest_addr = addr + rounded;
    if (b.next != kNone) blocks_.at(b.next).prev = rest_addr;
    b.next = rest_addr;
    b.size = rounded;
    bin_insert(rest_addr, rest);
    blocks_.emplace(rest_addr, rest);  // references into an unordered_map survive a rehash
    ++rest.segment->blocks;
    ++stats_.splits;
  }
  Block& blk = blocks_.at(addr);
  blk.allocated = true;
  blk.requested = requested;
  blk.stream = stream;
  ++blk.segment->live_blocks;

  stats_.allocated_bytes += blk.size;
  stats_.allocated_by_pool[pool_index(blk.pool)] += blk.size;
  stats_.requested_bytes += requested;
  ++stats_.active_blocks;
  ++stats_.allocs;
  if (from_cache) ++stats_.bin_hits;
  note_peaks();

  out.addr = addr;
  out.size = blk.size;
  out.requested = requested;
  out.stream = stream;
  out.from_cache = from_cache;
  return out;
}

inline void ReferenceAllocator::free(std::uint64_t addr) {
  const auto it = blocks_.find(addr);
  if (it == blocks_.end()) {
    throw std::invalid_argument(
        fmt::format("free of 0x{:x}, which this allocator never handed out", addr));
  }
  Block& b = it->second;
  if (!b.allocated) throw std::invalid_argument(fmt::format("double free of 0x{:x}", addr));
  b.allocated = false;
  stats_.allocated_bytes -= b.size;
  stats_.allocated_by_pool[pool_index(b.pool)] -= b.size;
  stats_.requested_bytes -= b.requested;
  b.requested = 0;
  --stats_.active_blocks;
  ++stats_.frees;
  Segment& seg = *b.segment;
  if (--seg.live_blocks == 0) seg.idle_since = tick_;

  const std::uint64_t merged = config_.coalesce ? merge_free_neighbours(addr) : addr;
  bin_insert(merged, blocks_.at(merged));
}

// Absorbs free neighbours (already in bins) into the block at `addr`, which is
// not in a bin yet. Returns the address of the merged block.
inline std::uint64_t ReferenceAllocator::merge_free_neighbours(std::uint64_t addr) {
  const auto mergeable = [&](std::uint64_t other, const Block& self) {
    if (other == kNone) return false;
    const Block& o = blocks_.at(other);
    return !o.allocated && o.stream == self.stream;
  };
  Block* self = &blocks_.at(addr);
  if (mergeable(self->next, *self)) {
    const std::uint64_t n = self->next;
    Block nb = blocks_.at(n);
    bin_erase(n, nb);
    self->size += nb.size;
    self->next = nb.next;
    if (nb.next != kNone) blocks_.at(nb.next).prev = addr;
    blocks_.erase(n);
    --self->segment->blocks;
    ++stats_.merges;
  }
  self = &blocks_.at(addr);
  if (mergeable(self->prev, *self)) {
    const std::uint64_t p = self->prev;
    Block& pb = blocks_.at(p);
    bin_erase(p, pb);
    pb.size += self->size;
    pb.next = self->next;
    if (self->next != kNone) blocks_.at(self->next).prev = p;
    --pb.segment->blocks;
    blocks_.erase(addr);
    ++stats_.merges;
    return p;
  }
  return addr;
}

inline std::size_t ReferenceAllocator::release_free_segments(std::uint64_t min_idle_ticks,
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
    bin_erase(base, blocks_.at(base));
    blocks_.erase(base);
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

inline std::size_t ReferenceAllocator::empty_cache() {
  return release_free_segments(0, false);
}

inline void ReferenceAllocator::tick() {
  ++tick_;
  if (config_.release_idle_after > 0) release_free_segments(config_.release_idle_after, true);
}

inline void ReferenceAllocator::note_peaks() {
  stats_.peak_allocated_bytes = std::max(stats_.peak_allocated_bytes, stats_.allocated_bytes);
  stats_.peak_reserved_bytes = std::max(stats_.peak_reserved_bytes, stats_.reserved_bytes);
}

inline std::uint64_t ReferenceAllocator::largest_cached_block() const {
  // The largest block sits in the highest non-empty class of some pool: only
  // that class is scanned (or, with size-ordered best-fit bins, read off its end).
  std::uint64_t best = 0;
  for (int p = 0; p < kPools; ++p) {
    for (int c = kSizeClasses - 1; c >= 0; --c) {
      const Bin& bin = bins_[static_cast<std::size_t>(p * kSizeClasses + c)];
      if (bin.empty()) continue;
      if (config_.fit == FitPolicy::kBestFit) {
        best = std::max(best, bin.rbegin()->size);
      } else {
        for (const BinEntry& e : bin) best = std::max(best, e.size);
      }
      break;
    }
  }
  return best;
}

inline std::size_t ReferenceAllocator::cached_blocks() const {
  std::size_t n = 0;
  for (const Bin& bin : bins_) n += bin.size();
  return n;
}

inline bool ReferenceAllocator::owns_live(std::uint64_t addr) const {
  const auto it = blocks_.find(addr);
  return it != blocks_.end() && it->second.allocated;
}

}  // namespace caching_alloc::testing
