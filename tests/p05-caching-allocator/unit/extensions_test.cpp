// Extensions 1, 2, 4 and 5: coalescing, idle-segment release, best-fit bins,
// Prometheus exposition.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <sstream>
#include <string>

#include "caching_alloc/caching_allocator.hpp"
#include "caching_alloc/metrics_out.hpp"
#include "caching_alloc/workloads.hpp"

namespace caching_alloc {
namespace {

constexpr std::uint64_t kOnePointTwoMiB = 1258291;

AllocatorConfig coalescing() {
  AllocatorConfig c;
  c.coalesce = true;
  return c;
}

// The curriculum's "alloc/free/alloc pattern that fails now succeeds".
TEST(Coalescing, FailingPatternNowSucceeds) {
  for (const bool coalesce : {false, true}) {
    SCOPED_TRACE(coalesce ? "coalescing" : "no coalescing");
    Device dev(32 * kMiB);
    AllocatorConfig cfg;
    cfg.coalesce = coalesce;
    CachingAllocator a(dev, cfg);
    auto small = a.allocate(kOnePointTwoMiB, 0);
    ASSERT_TRUE(small.ok());
    a.free(small.value().addr);
    auto big = a.allocate(20 * kMiB, 0);  // needs all 20 MiB of the segment in one piece
    EXPECT_EQ(a.check_invariants(), "");
    if (coalesce) {
      ASSERT_TRUE(big.ok());
      EXPECT_TRUE(big.value().from_cache);
      EXPECT_EQ(a.stats().device_mallocs, 1u);
      EXPECT_EQ(a.stats().merges, 1u);
    } else {
      EXPECT_FALSE(big.ok())
          << "1.26 + 19.74 MiB pieces, 12 MiB left on the device, nothing to flush";
      EXPECT_EQ(a.stats().ooms, 1u);
    }
  }
}

TEST(Coalescing, MergedSegmentIsReturnable) {
  Device dev(64 * kMiB);
  CachingAllocator a(dev, coalescing());
  auto blk = a.allocate(kOnePointTwoMiB, 0);
  ASSERT_TRUE(blk.ok());
  a.free(blk.value().addr);
  EXPECT_EQ(a.empty_cache(), 1u);
  EXPECT_EQ(a.stats().device_frees, 1u);
  EXPECT_EQ(a.stats().reserved_bytes, 0u);
  EXPECT_EQ(a.check_invariants(), "");
}

TEST(Coalescing, MergesBothNeighboursButNotAcrossStreams) {
  Device dev(64 * kMiB);
  CachingAllocator a(dev, coalescing());
  const auto x = a.allocate(2 * kMiB, 0).value();
  const auto y = a.allocate(2 * kMiB, 0).value();
  const auto z = a.allocate(2 * kMiB, 0).value();
  ASSERT_EQ(y.addr, x.addr + 2 * kMiB);
  a.free(x.addr);
  a.free(z.addr);  // merges with the segment's tail
  EXPECT_EQ(a.cached_blocks(), 2u);
  a.free(y.addr);  // merges with both sides: the whole segment again
  EXPECT_EQ(a.cached_blocks(), 1u);
  EXPECT_EQ(a.largest_cached_block(), 20 * kMiB);
  EXPECT_EQ(a.check_invariants(), "");

  // A block last used on stream 1 does not merge with stream 0's neighbours.
  const auto p = a.allocate(2 * kMiB, 1).value();
  const auto q = a.allocate(2 * kMiB, 0).value();
  a.free(q.addr);
  a.free(p.addr);
  EXPECT_GE(a.cached_blocks(), 2u);
  EXPECT_EQ(a.check_invariants(), "");
}

TEST(IdleRelease, ReturnsSegmentsIdleForNTicks) {
  Device dev(256 * kMiB);
  AllocatorConfig cfg;
  cfg.release_idle_after = 2;
  CachingAllocator a(dev, cfg);
  const auto blk = a.allocate(24 * kMiB, 0).value();
  a.free(blk.addr);
  a.tick();
  EXPECT_EQ(a.stats().reserved_bytes, 24 * kMiB) << "idle for 1 tick only";
  a.tick();
  EXPECT_EQ(a.stats().reserved_bytes, 0u);
  EXPECT_EQ(a.stats().idle_releases, 1u);
  EXPECT_EQ(a.check_invariants(), "");
}

TEST(IdleRelease, SawtoothBetweenNeverAndAlways) {
  const AllocatorConfig base = coalescing();
  const auto never = run_sawtooth(base, ReleasePolicy::kNever, 0, 30, 10);
  const auto idle = run_sawtooth(base, ReleasePolicy::kIdle, 3, 30, 10);
  const auto always = run_sawtooth(base, ReleasePolicy::kEveryIteration, 0, 30, 10);
  EXPECT_EQ(never.device_frees, 0u);
  EXPECT_GT(idle.device_frees, 0u);
  EXPECT_LT(idle.device_frees, always.device_frees)
      << "the idle policy syncs less than empty_cache every step";
  EXPECT_LT(idle.mean_reserved_mib, never.mean_reserved_mib)
      << "...and holds less than never releasing";
  EXPECT_EQ(never.peak_reserved, idle.peak_reserved);
  // The sawtooth: reserved rises at each burst and falls back 3 iterations later.
  ASSERT_EQ(idle.reserved_mib.size(), 30u);
  EXPECT_GT(idle.reserved_mib[9], idle.reserved_mib[8]);
  EXPECT_LT(idle.reserved_mib[12], idle.reserved_mib[9]);
}

TEST(BestFit, PicksSmallestFittingBlockFirstFitPicksLowestAddress) {
  for (const FitPolicy fit : {FitPolicy::kFirstFit, FitPolicy::kBestFit}) {
    Device dev(64 * kMiB);
    AllocatorConfig cfg;
    cfg.fit = fit;
    CachingAllocator a(dev, cfg);
    const auto big = a.allocate(14 * kMiB, 0).value();   // lower address
    const auto snug = a.allocate(12 * kMiB, 0).value();  // same 8-16 MiB class
    a.free(big.addr);
    a.free(snug.addr);
    const auto got = a.allocate(11 * kMiB, 0).value();
    EXPECT_EQ(got.addr, fit == FitPolicy::kBestFit ? snug.addr : big.addr);
    EXPECT_EQ(a.check_invariants(), "");
  }
}

TEST(BestFit, WorkloadIsDeterministicAndUniformSizesCannotTellPoliciesApart) {
  AllocatorConfig first;
  AllocatorConfig best;
  best.fit = FitPolicy::kBestFit;
  const auto f1 = run_fit_workload(first, false, 7, 500);
  const auto b1 = run_fit_workload(best, false, 7, 500);
  EXPECT_EQ(f1.device_mallocs, b1.device_mallocs);
  EXPECT_EQ(f1.peak_reserved, b1.peak_reserved);
  EXPECT_DOUBLE_EQ(f1.mean_fragmentation, b1.mean_fragmentation);
  const auto m1 = run_fit_workload(best, true, 7, 500);
  const auto m2 = run_fit_workload(best, true, 7, 500);
  EXPECT_EQ(m1.device_mallocs, m2.device_mallocs);
  EXPECT_DOUBLE_EQ(m1.mean_fragmentation, m2.mean_fragmentation);
}

TEST(Metrics, PrometheusExpositionIsWellFormed) {
  Device dev(64 * kMiB);
  CachingAllocator a(dev);
  const auto x = a.allocate(kOnePointTwoMiB, 0).value();
  (void)a.allocate(4096, 1).value();
  a.free(x.addr);
  (void)a.allocate(kOnePointTwoMiB, 2).value();
  const std::string text = prometheus_text(a);
  ASSERT_FALSE(text.empty());
  EXPECT_EQ(text.back(), '\n');

  std::map<std::string, std::string> type_of;
  std::set<std::string> helped;
  std::set<std::string> series;
  std::map<std::string, double> value;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("# HELP ", 0) == 0) {
      helped.insert(line.substr(7, line.find(' ', 7) - 7));
      continue;
    }
    if (line.rfind("# TYPE ", 0) == 0) {
      const auto name_end = line.find(' ', 7);
      type_of[line.substr(7, name_end - 7)] = line.substr(name_end + 1);
      continue;
    }
    const auto space = line.rfind(' ');
    const std::string key = line.substr(0, space);
    const std::string name = key.substr(0, key.find('{'));
    EXPECT_TRUE(series.insert(key).second) << "duplicate series " << key;
    EXPECT_TRUE(helped.count(name)) << name << " has no HELP before its samples";
    ASSERT_TRUE(type_of.count(name)) << name << " has no TYPE before its samples";
    const bool is_counter = type_of[name] == "counter";
    const bool ends_total = name.size() > 6 && name.ends_with("_total");
    EXPECT_EQ(is_counter, ends_total) << name;
    EXPECT_TRUE(ends_total || name.ends_with("_bytes")) << name << ": use a base unit or _total";
    value[key] += std::stod(line.substr(space + 1));
  }
  const AllocatorStats& s = a.stats();
  EXPECT_EQ(value["gpulab_allocator_reserved_bytes{pool=\"small\"}"] +
                value["gpulab_allocator_reserved_bytes{pool=\"large\"}"],
            static_cast<double>(s.reserved_bytes));
  EXPECT_EQ(value["gpulab_allocator_cached_bytes"], static_cast<double>(s.cached_bytes()));
  EXPECT_EQ(value["gpulab_allocator_largest_cached_block_bytes"],
            static_cast<double>(a.largest_cached_block()));
  EXPECT_EQ(value["gpulab_allocator_cross_stream_syncs_total"], 1.0);
  EXPECT_EQ(value["gpulab_allocator_bin_hits_total"], static_cast<double>(s.bin_hits));
}

}  // namespace
}  // namespace caching_alloc
