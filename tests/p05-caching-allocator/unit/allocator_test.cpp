// The twelve base tests of the allocator (curriculum P05 lab 01), each also
// checking the invariants (reserved >= allocated, reserved = sum of segments,
// blocks tile their segments, bins hold exactly the free blocks).
#include <gtest/gtest.h>

#include <vector>

#include "caching_alloc/caching_allocator.hpp"
#include "caching_alloc/device.hpp"
#include "caching_alloc/size_policy.hpp"

namespace caching_alloc {
namespace {

constexpr std::uint64_t kOnePointTwoMiB = 1258291;  // floor(1.2 * 2^20)

Allocation must_alloc(CachingAllocator& a, std::uint64_t bytes, StreamId stream = 0) {
  auto r = a.allocate(bytes, stream);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
  EXPECT_EQ(a.check_invariants(), "");
  return r.value();
}

void must_free(CachingAllocator& a, std::uint64_t addr) {
  a.free(addr);
  EXPECT_EQ(a.check_invariants(), "");
}

TEST(Allocator, RoundSizeAndPools) {
  EXPECT_EQ(round_size(1), 512u);
  EXPECT_EQ(round_size(512), 512u);
  EXPECT_EQ(round_size(513), 1024u);
  EXPECT_EQ(round_size(kOnePointTwoMiB), 1258496u);
  EXPECT_EQ(pool_for(kMiB), Pool::kSmall);  // PyTorch: <= 1 MiB is small
  EXPECT_EQ(pool_for(kMiB + 512), Pool::kLarge);
  EXPECT_EQ(segment_size(512), 2 * kMiB);
  EXPECT_EQ(segment_size(kMiB), 2 * kMiB);
  EXPECT_EQ(segment_size(kMiB + 512), 20 * kMiB);
  EXPECT_EQ(segment_size(10 * kMiB - 512), 20 * kMiB);
  EXPECT_EQ(segment_size(10 * kMiB), 10 * kMiB);
  EXPECT_EQ(segment_size(11 * kMiB), 12 * kMiB);
  EXPECT_EQ(size_class(512), 0);
  EXPECT_EQ(size_class(1258496), 11);  // 2^20 <= 1.2 MiB < 2^21
  EXPECT_EQ(size_class(std::uint64_t{1} << 40), kSizeClasses - 1);
}

TEST(Allocator, DeviceFirstFitAndCoalesce) {
  Device dev(30 * kMiB);
  const auto a = *dev.malloc(10 * kMiB);
  const auto b = *dev.malloc(10 * kMiB);
  const auto c = *dev.malloc(10 * kMiB);
  EXPECT_FALSE(dev.malloc(512).has_value());
  dev.free(b);
  EXPECT_EQ(dev.largest_hole(), 10 * kMiB);
  const auto d = *dev.malloc(5 * kMiB);
  EXPECT_EQ(d, b) << "first fit takes the lowest hole that fits";
  dev.free(d);
  dev.free(a);
  EXPECT_EQ(dev.holes(), 1u) << "a's and b's holes coalesce";
  EXPECT_EQ(dev.largest_hole(), 20 * kMiB);
  EXPECT_EQ(*dev.malloc(20 * kMiB), a);
  (void)c;
}

TEST(Allocator, DeviceCountsCalls) {
  Device dev(64 * kMiB);
  for (int i = 0; i < 7; ++i) dev.free(*dev.malloc(kMiB));
  EXPECT_FALSE(dev.malloc(65 * kMiB).has_value());
  EXPECT_EQ(dev.counters().mallocs, 7u);
  EXPECT_EQ(dev.counters().frees, 7u);
  EXPECT_EQ(dev.counters().malloc_failures, 1u);
  EXPECT_THROW(dev.free(12345), std::invalid_argument);
  EXPECT_EQ(dev.counters().frees, 7u);
}

TEST(Allocator, BinHitReusesBlock) {
  Device dev(64 * kMiB);
  CachingAllocator a(dev);
  const auto first = must_alloc(a, 3000);
  must_free(a, first.addr);
  const auto second = must_alloc(a, 3000);
  EXPECT_EQ(second.addr, first.addr);
  EXPECT_TRUE(second.from_cache);
  EXPECT_EQ(a.stats().device_mallocs, 1u);
  EXPECT_EQ(a.stats().bin_hits, 1u);
}

TEST(Allocator, SmallLargeSegregation) {
  Device dev(64 * kMiB);
  CachingAllocator a(dev);
  must_free(a, must_alloc(a, 4 * kMiB).addr);  // large pool: a 20 MiB segment, cached
  const auto small = must_alloc(a, 4096);
  EXPECT_FALSE(small.from_cache) << "a cached large block never serves a small request";
  EXPECT_EQ(a.stats().device_mallocs, 2u);
  EXPECT_EQ(a.stats().reserved_by_pool[0], 2 * kMiB);

  // ...and vice versa: 2 MiB of cached small-pool memory does not serve 1.5 MiB.
  Device dev2(64 * kMiB);
  CachingAllocator b(dev2);
  must_free(b, must_alloc(b, 4096).addr);
  EXPECT_EQ(b.largest_cached_block(), 2 * kMiB - 4096);
  const auto large = must_alloc(b, 1536 * 1024);
  EXPECT_FALSE(large.from_cache);
  EXPECT_EQ(b.stats().reserved_by_pool[1], 20 * kMiB);
  EXPECT_EQ(b.stats().device_mallocs, 2u);
}

TEST(Allocator, SplitAccounting) {
  // The curriculum's hand trace of a 1.2 MiB request.
  Device dev(64 * kMiB);
  CachingAllocator a(dev);
  const auto blk = must_alloc(a, kOnePointTwoMiB);
  EXPECT_EQ(blk.size, 1258496u);
  const AllocatorStats& s = a.stats();
  EXPECT_EQ(s.reserved_bytes, 20971520u);
  EXPECT_EQ(s.allocated_bytes, 1258496u);
  EXPECT_EQ(s.cached_bytes(), 19713024u);
  EXPECT_EQ(a.largest_cached_block(), 19713024u) << "the remainder is cached in the large pool";
  EXPECT_EQ(size_class(19713024), 24 - 9) << "the remainder's bin is the 2^24 class";
  EXPECT_EQ(s.device_mallocs, 1u);
  EXPECT_EQ(s.device_frees, 0u);
  EXPECT_EQ(s.bin_hits, 0u);
  EXPECT_EQ(s.splits, 1u);
}

TEST(Allocator, SplitBlockNotReturnable) {
  Device dev(64 * kMiB);
  CachingAllocator a(dev);
  must_free(a, must_alloc(a, kOnePointTwoMiB).addr);
  EXPECT_EQ(a.stats().allocated_bytes, 0u);
  EXPECT_EQ(a.stats().reserved_bytes, 20971520u);
  EXPECT_EQ(a.empty_cache(), 0u) << "you can't free half a segment";
  EXPECT_EQ(a.stats().device_frees, 0u);
  EXPECT_EQ(a.stats().reserved_bytes, 20971520u);
  EXPECT_EQ(a.check_invariants(), "");
}

TEST(Allocator, FreeNeverReachesDriver) {
  Device dev(64 * kMiB);
  CachingAllocator a(dev);
  must_free(a, must_alloc(a, 3 * kMiB).addr);
  const std::uint64_t reserved = a.stats().reserved_bytes;
  for (int i = 0; i < 1000; ++i) {
    auto r = a.allocate(3 * kMiB, 0);
    ASSERT_TRUE(r.ok());
    a.free(r.value().addr);
    ASSERT_EQ(a.stats().reserved_bytes, reserved);
  }
  EXPECT_EQ(a.check_invariants(), "");
  EXPECT_EQ(a.stats().device_frees, 0u);
  EXPECT_EQ(dev.counters().frees, 0u);
  EXPECT_EQ(a.stats().device_mallocs, 1u);
  EXPECT_EQ(a.stats().allocated_bytes, 0u);
}

TEST(Allocator, FlushCacheReleasesUnsplitBlocks) {
  Device dev(64 * kMiB);
  CachingAllocator a(dev);
  const auto whole = must_alloc(a, 12 * kMiB);        // >= 10 MiB: its own 12 MiB segment, unsplit
  const auto split = must_alloc(a, kOnePointTwoMiB);  // carved from a 20 MiB segment
  must_free(a, whole.addr);
  must_free(a, split.addr);
  EXPECT_EQ(a.stats().reserved_bytes, 32 * kMiB);
  EXPECT_EQ(a.empty_cache(), 1u);
  EXPECT_EQ(a.check_invariants(), "");
  EXPECT_EQ(a.stats().device_frees, 1u);
  EXPECT_EQ(a.stats().reserved_bytes, 20 * kMiB);
  EXPECT_EQ(dev.used_bytes(), 20 * kMiB);
}

TEST(Allocator, OomFlushAndRetry) {
  Device dev(64 * kMiB);
  CachingAllocator a(dev);
  std::vector<std::uint64_t> blocks;
  for (int i = 0; i < 3; ++i) blocks.push_back(must_alloc(a, 12 * kMiB).addr);
  for (const auto b : blocks) must_free(a, b);
  const auto big = must_alloc(a, 40 * kMiB);  // 28 MiB free on the device: flush, retry
  EXPECT_FALSE(big.from_cache);
  const AllocatorStats& s = a.stats();
  EXPECT_EQ(s.device_mallocs, 4u);
  EXPECT_EQ(s.device_frees, 3u);
  EXPECT_EQ(s.device_malloc_failures, 1u);
  EXPECT_EQ(s.alloc_retries, 1u);
  EXPECT_EQ(s.reserved_bytes, 40 * kMiB);
  EXPECT_EQ(s.ooms, 0u);
}

TEST(Allocator, OomGenuine) {
  Device dev(64 * kMiB);
  CachingAllocator a(dev);
  const auto held = must_alloc(a, 40 * kMiB);
  const AllocatorStats before = a.stats();
  auto r = a.allocate(40 * kMiB, 0);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("out of memory"), std::string::npos);
  const AllocatorStats& after = a.stats();
  EXPECT_EQ(after.ooms, 1u);
  EXPECT_EQ(after.reserved_bytes, before.reserved_bytes);
  EXPECT_EQ(after.allocated_bytes, before.allocated_bytes);
  EXPECT_EQ(after.device_mallocs, before.device_mallocs);
  EXPECT_EQ(after.device_frees, before.device_frees);
  EXPECT_EQ(a.check_invariants(), "");
  EXPECT_TRUE(a.owns_live(held.addr));
}

TEST(Allocator, StreamTagReuse) {
  Device dev(64 * kMiB);
  CachingAllocator a(dev);
  const auto on1 = must_alloc(a, 3 * kMiB, 1);
  must_free(a, on1.addr);
  const auto again1 = must_alloc(a, 3 * kMiB, 1);
  EXPECT_EQ(a.stats().cross_stream_syncs, 0u);
  EXPECT_FALSE(again1.reused_from_stream.has_value());
  must_free(a, again1.addr);
  const auto on2 = must_alloc(a, 3 * kMiB, 2);
  EXPECT_EQ(on2.addr, on1.addr);
  ASSERT_TRUE(on2.reused_from_stream.has_value());
  EXPECT_EQ(*on2.reused_from_stream, 1u);
  EXPECT_EQ(a.stats().cross_stream_syncs, 1u);
}

TEST(Allocator, RefusePolicyNeverCrossesStreams) {
  Device dev(64 * kMiB);
  AllocatorConfig cfg;
  cfg.cross_stream = CrossStreamPolicy::kRefuse;
  CachingAllocator a(dev, cfg);
  must_free(a, must_alloc(a, 3 * kMiB, 1).addr);
  const auto on2 = must_alloc(a, 3 * kMiB, 2);
  EXPECT_FALSE(on2.from_cache);
  EXPECT_EQ(a.stats().cross_stream_syncs, 0u);
  EXPECT_EQ(a.stats().device_mallocs, 2u);
}

TEST(Allocator, BadFreesLeaveStateUntouched) {
  Device dev(64 * kMiB);
  CachingAllocator a(dev);
  const auto blk = must_alloc(a, kOnePointTwoMiB);
  const auto inside = blk.addr + 512;
  EXPECT_THROW(a.free(inside), std::invalid_argument);
  must_free(a, blk.addr);
  const AllocatorStats before = a.stats();
  EXPECT_THROW(a.free(blk.addr), std::invalid_argument);  // double free
  EXPECT_EQ(a.stats().frees, before.frees);
  EXPECT_EQ(a.check_invariants(), "");
  EXPECT_THROW((void)a.allocate(0, 0), std::invalid_argument);
  EXPECT_THROW((void)a.allocate(kMaxRequest + 1, 0), std::invalid_argument);
}

}  // namespace
}  // namespace caching_alloc
