// The framework layer over the driver: PyTorch's caching allocator design.
// A request is rounded, served from a size-class bin of cached blocks (split if
// the block is much bigger), and only on a miss asks the Device for a whole
// segment. Freed blocks go back to the bins, never to the driver, so
// "reserved" (what nvidia-smi sees) stays above "allocated" (live tensors).
#pragma once

#include <array>
#include <bit>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "caching_alloc/address_map.hpp"
#include "caching_alloc/bin_tree.hpp"
#include "caching_alloc/block.hpp"
#include "caching_alloc/block_pool.hpp"
#include "caching_alloc/device.hpp"
#include "caching_alloc/size_policy.hpp"
#include "gpulab/expected.hpp"

namespace caching_alloc {

// Inside one size class: the lowest address that fits, or the smallest block that fits.
enum class FitPolicy : std::uint8_t { kFirstFit, kBestFit };
// A cached block last used on another stream: reuse it behind an event edge
// (counted in cross_stream_syncs), or refuse it as PyTorch does.
enum class CrossStreamPolicy : std::uint8_t { kEventEdge, kRefuse };

struct AllocatorConfig {
  FitPolicy fit = FitPolicy::kFirstFit;
  CrossStreamPolicy cross_stream = CrossStreamPolicy::kEventEdge;
  // Extension 1: merge a freed block with free neighbours of the same segment
  // (and the same stream tag), as PyTorch's free_block does. Off by default so
  // the base tests keep the curriculum's "a split segment is never returnable".
  bool coalesce = false;
  // Extension 2: at every tick(), return segments that have been entirely free
  // for this many ticks. 0 = never (only an explicit empty_cache()).
  std::uint64_t release_idle_after = 0;
};

struct Allocation {
  std::uint64_t addr = 0;
  std::uint64_t size = 0;       // rounded size, what the block occupies
  std::uint64_t requested = 0;  // what the caller asked for
  StreamId stream = 0;
  bool from_cache = false;  // a bin hit: no driver call
  // Set when the block was last used on another stream: the caller must make
  // `stream` wait for that stream's free point (an event edge) before using it.
  std::optional<StreamId> reused_from_stream;
};

struct AllocatorStats {
  std::uint64_t allocated_bytes = 0;  // live blocks (rounded sizes)
  std::uint64_t requested_bytes = 0;  // live blocks as asked for
  std::uint64_t reserved_bytes = 0;   // segments held from the driver
  std::array<std::uint64_t, kPools> reserved_by_pool{};
  std::array<std::uint64_t, kPools> allocated_by_pool{};
  std::uint64_t peak_allocated_bytes = 0;
  std::uint64_t peak_reserved_bytes = 0;
  std::uint64_t active_blocks = 0;
  std::uint64_t segments = 0;

  std::uint64_t allocs = 0;  // successful allocate() calls
  std::uint64_t frees = 0;
  std::uint64_t bin_hits = 0;
  std::uint64_t splits = 0;
  std::uint64_t merges = 0;
  std::uint64_t device_mallocs = 0;
  std::uint64_t device_frees = 0;
  std::uint64_t device_malloc_failures = 0;
  std::uint64_t alloc_retries = 0;  // flush-and-retry after a failed device malloc
  std::uint64_t ooms = 0;
  std::uint64_t cross_stream_syncs = 0;
  std::uint64_t idle_releases = 0;  // segments returned by the idle policy

  [[nodiscard]] std::uint64_t cached_bytes() const { return reserved_bytes - allocated_bytes; }
};

class CachingAllocator {
 public:
  explicit CachingAllocator(Device& device, AllocatorConfig config = {});
  ~CachingAllocator();
  CachingAllocator(const CachingAllocator&) = delete;
  CachingAllocator& operator=(const CachingAllocator&) = delete;

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
  // Empty when every invariant holds; otherwise what is broken. Tests call it
  // after every operation.
  [[nodiscard]] std::string check_invariants() const;

 private:
  // Every change of a block's size goes through here, so its bin index
  // always matches its size and a free does not recompute the size class.
  static void resize(Block* b, std::uint64_t size);
  void bin_insert(Block* b);
  void bin_erase(Block* b);
  [[nodiscard]] Block* find_cached(Pool pool, std::uint64_t rounded, StreamId stream,
                                   bool same_stream);
  // The first block of one bin that serves the request, in the fit policy's order.
  [[nodiscard]] Block* find_in_bin(const BinTree& bin, std::uint64_t rounded, StreamId stream,
                                   bool same_stream) const;
  // The miss path: a new segment from the driver, flush-and-retry, OOM.
  gpulab::Expected<Allocation> allocate_segment(std::uint64_t rounded, std::uint64_t requested,
                                                Pool pool, StreamId stream);
  // `b` is out of its bin (or a fresh segment's only block).
  // Returns the stream the block was last used on when that is not `stream`.
  std::optional<StreamId> take(Block* b, bool from_cache, std::uint64_t rounded,
                               std::uint64_t requested, StreamId stream);
  void split(Block* b, std::uint64_t rounded);
  Block* merge_free_neighbours(Block* b);
  void drop_block(Block* b);
  std::size_t release_free_segments(std::uint64_t min_idle_ticks, bool count_as_idle);
  static constexpr std::size_t pool_index(Pool p) { return static_cast<std::size_t>(p); }
  // The refusals live out of line so the inline hot paths carry no formatting code.
  [[noreturn, gnu::noinline, gnu::cold]] static void refuse_request(std::uint64_t bytes);
  [[noreturn, gnu::noinline, gnu::cold]] static void refuse_free(std::uint64_t addr, bool known);

  Device& device_;
  AllocatorConfig config_;
  AllocatorStats stats_;
  std::uint64_t tick_ = 0;
  AddressMap blocks_;                          // address -> block, live and cached
  BlockPool block_pool_;                       // where the Block records live
  std::map<std::uint64_t, Segment> segments_;  // base address -> segment
  // Bins are indexed pool * kBinStride + class: a power of two, so the pool
  // and the class of a bin index are a shift and a mask.
  static constexpr std::size_t kBinStride = 32;
  static_assert(kSizeClasses <= kBinStride, "nonempty_ holds one bit per size class");
  // kPools x kBinStride, the last 2 of each pool unused. In the object itself, not
  // behind a vector's pointer: one load less per bin access.
  std::array<BinTree, kPools * kBinStride> bins_;
  // Bit c of nonempty_[pool] is set when that pool's class-c bin holds a block,
  // so a search jumps straight to the next class that can serve it.
  std::array<std::uint32_t, kPools> nonempty_{};
};

// The bin-hit path is defined here, inline, so a caller's loop pays no call:
// on this path the calls and their register saves were ~15% of the
// instructions of an alloc+free pair. The misses, splits and merges it
// reaches stay out of line in caching_allocator.cpp.

inline void CachingAllocator::resize(Block* b, std::uint64_t size) {
  b->size = size;
  b->bin = static_cast<std::uint16_t>(pool_index(b->pool) * kBinStride +
                                      static_cast<std::size_t>(size_class(size)));
}

[[gnu::always_inline]] inline void CachingAllocator::bin_insert(Block* b) {
  bins_[b->bin].insert(b);
  nonempty_[b->bin / kBinStride] |= std::uint32_t{1} << (b->bin % kBinStride);
}

[[gnu::always_inline]] inline void CachingAllocator::bin_erase(Block* b) {
  BinTree& bin = bins_[b->bin];
  bin.erase(b);
  if (bin.empty()) nonempty_[b->bin / kBinStride] &= ~(std::uint32_t{1} << (b->bin % kBinStride));
}

[[gnu::always_inline]] inline Block* CachingAllocator::find_in_bin(const BinTree& bin,
                                                                   std::uint64_t rounded,
                                                                   StreamId stream,
                                                                   bool same_stream) const {
  if (config_.fit == FitPolicy::kBestFit) {
    // Size-ordered: everything from lower_bound on fits; the first that
    // passes the stream test is the smallest.
    for (Block* b = bin.lower_bound_size(rounded); b != nullptr; b = BinTree::next(b)) {
      if ((b->stream == stream) == same_stream) return b;
    }
  } else {
    for (Block* b = bin.first(); b != nullptr; b = BinTree::next(b)) {
      if (b->size >= rounded && (b->stream == stream) == same_stream) return b;
    }
  }
  return nullptr;
}

[[gnu::always_inline]] inline Block* CachingAllocator::find_cached(Pool pool, std::uint64_t rounded,
                                                                   StreamId stream,
                                                                   bool same_stream) {
  // The request's own class first, straight from the request: on a bin hit
  // the block's address then depends on nothing but the bin's first block,
  // not on the non-empty bitmap that the previous free just rewrote (its
  // store would have to reach the load before the search could start).
  // The order is the bitmap walk's: the own class is its first step.
  const int own = size_class(rounded);
  const std::size_t base = pool_index(pool) * kBinStride;
  if (Block* b = find_in_bin(bins_[base + static_cast<std::size_t>(own)], rounded, stream, same_stream)) {
    return b;
  }
  // Then only the non-empty classes above it.
  std::uint32_t classes = nonempty_[pool_index(pool)] & (~std::uint32_t{1} << own);
  while (classes != 0) {
    const int c = std::countr_zero(classes);
    classes &= classes - 1;
    if (Block* b = find_in_bin(bins_[base + static_cast<std::size_t>(c)], rounded, stream, same_stream)) {
      return b;
    }
  }
  return nullptr;
}

[[gnu::always_inline]] inline gpulab::Expected<Allocation> CachingAllocator::allocate(
    std::uint64_t bytes, StreamId stream) {
  if (bytes - 1 >= kMaxRequest) [[unlikely]]
    refuse_request(bytes);  // 0 wraps around
  const std::uint64_t rounded = round_size(bytes);
  const Pool pool = pool_for(rounded);

  // 1+2. A cached block of this stream; else (if allowed) one of another stream.
  Block* hit = find_cached(pool, rounded, stream, true);
  if (hit == nullptr && config_.cross_stream == CrossStreamPolicy::kEventEdge) {
    hit = find_cached(pool, rounded, stream, false);
  }
  if (hit != nullptr) [[likely]] {
    bin_erase(hit);
    const std::optional<StreamId> reused_from = take(hit, true, rounded, bytes, stream);
    // Built in place in the caller's result: an Allocation returned by value
    // was copied twice through the stack on its way there, and the address
    // that free() then hashes waited for those copies.
    return gpulab::Expected<Allocation>(std::in_place, hit->addr, hit->size, bytes, stream, true,
                                        reused_from);
  }
  return allocate_segment(rounded, bytes, pool, stream);
}

[[gnu::always_inline]] inline std::optional<StreamId> CachingAllocator::take(Block* b, bool from_cache,
                                                                         std::uint64_t rounded,
                                                                         std::uint64_t requested,
                                                                         StreamId stream) {
  std::optional<StreamId> reused_from;
  if (b->stream != stream) [[unlikely]] {
    reused_from = b->stream;
    ++stats_.cross_stream_syncs;
  }
  if (should_split(b->pool, b->size, rounded)) split(b, rounded);
  b->allocated = true;
  b->requested = requested;
  b->stream = stream;
  ++b->segment->live_blocks;

  stats_.allocated_bytes += b->size;
  stats_.allocated_by_pool[pool_index(b->pool)] += b->size;
  stats_.requested_bytes += requested;
  ++stats_.active_blocks;
  ++stats_.allocs;
  if (from_cache) ++stats_.bin_hits;
  // Only allocated bytes grow here; the reserved peak moves with a new
  // segment, in allocate_segment.
  stats_.peak_allocated_bytes = std::max(stats_.peak_allocated_bytes, stats_.allocated_bytes);

  return reused_from;
}

[[gnu::always_inline]] inline void CachingAllocator::free(std::uint64_t addr) {
  Block* b = blocks_.find(addr);
  if (b == nullptr || !b->allocated) [[unlikely]]
    refuse_free(addr, b != nullptr);
  b->allocated = false;
  stats_.allocated_bytes -= b->size;
  stats_.allocated_by_pool[pool_index(b->pool)] -= b->size;
  stats_.requested_bytes -= b->requested;
  b->requested = 0;
  --stats_.active_blocks;
  ++stats_.frees;
  Segment& seg = *b->segment;
  if (--seg.live_blocks == 0) seg.idle_since = tick_;

  bin_insert(config_.coalesce ? merge_free_neighbours(b) : b);
}

}  // namespace caching_alloc
