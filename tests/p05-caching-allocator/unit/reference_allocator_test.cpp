// The rebuilt hot path (intrusive bin trees, a flat address map, a block pool)
// must make exactly the choices the std::set allocator made: the same block
// for every request, the same splits, merges, driver calls, OOMs and error
// messages. Random operation sequences under every configuration run through
// both, and every answer and every statistic is compared after each step.
#include "reference_allocator.hpp"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "caching_alloc/caching_allocator.hpp"
#include "gpulab/rng.hpp"

namespace caching_alloc {
namespace {

using testing::ReferenceAllocator;

std::string describe(const gpulab::Expected<Allocation>& r) {
  if (!r.ok()) return "error: " + r.error().message;
  const Allocation& a = r.value();
  return fmt::format("addr {} size {} requested {} stream {} from_cache {} reused_from {}", a.addr,
                     a.size, a.requested, a.stream, a.from_cache,
                     a.reused_from_stream ? static_cast<std::int64_t>(*a.reused_from_stream) : -1);
}

std::string describe(const AllocatorStats& s) {
  return fmt::format(
      "alloc {} req {} res {} res_by_pool {} {} alloc_by_pool {} {} peak {} {} active {} segs {} | "
      "allocs {} frees {} hits {} splits {} merges {} dmallocs {} dfrees {} dfail {} retries {} "
      "ooms {} xsync {} idle {}",
      s.allocated_bytes, s.requested_bytes, s.reserved_bytes, s.reserved_by_pool[0],
      s.reserved_by_pool[1], s.allocated_by_pool[0], s.allocated_by_pool[1], s.peak_allocated_bytes,
      s.peak_reserved_bytes, s.active_blocks, s.segments, s.allocs, s.frees, s.bin_hits, s.splits,
      s.merges, s.device_mallocs, s.device_frees, s.device_malloc_failures, s.alloc_retries, s.ooms,
      s.cross_stream_syncs, s.idle_releases);
}

template <class A>
std::string free_outcome(A& a, std::uint64_t addr) {
  try {
    a.free(addr);
    return "ok";
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
}

// Sizes across both pools and most classes: tiny, 512-multiples, just over
// 1 MiB, the 1-10 MiB range that shares 20 MiB segments, and whole segments.
std::uint64_t draw_size(gpulab::Rng& rng) {
  const double u = rng.uniform01();
  if (u < 0.35) return static_cast<std::uint64_t>(rng.uniform_int(1, 8192));
  if (u < 0.55) return static_cast<std::uint64_t>(rng.uniform_int(8192, kMiB));
  if (u < 0.65) return kMiB + static_cast<std::uint64_t>(rng.uniform_int(0, 2048));
  if (u < 0.92) return static_cast<std::uint64_t>(rng.uniform_int(kMiB, 10 * kMiB));
  return static_cast<std::uint64_t>(rng.uniform_int(10 * kMiB, 48 * kMiB));
}

void run_side_by_side(const AllocatorConfig& cfg, std::uint64_t capacity, std::uint64_t seed,
                      int steps) {
  Device dev_new(capacity);
  Device dev_ref(capacity);
  CachingAllocator fresh(dev_new, cfg);
  ReferenceAllocator ref(dev_ref, cfg);
  gpulab::Rng rng(seed);
  std::vector<std::uint64_t> live;
  std::vector<std::uint64_t> freed;  // for double frees
  for (int step = 0; step < steps; ++step) {
    SCOPED_TRACE(::testing::Message() << "step " << step);
    const double u = rng.uniform01();
    if (u < 0.5 || live.empty()) {
      const std::uint64_t bytes = draw_size(rng);
      const auto stream = static_cast<StreamId>(rng.uniform_int(0, 3));
      const auto got = fresh.allocate(bytes, stream);
      const auto want = ref.allocate(bytes, stream);
      ASSERT_EQ(describe(got), describe(want)) << bytes << " B on stream " << stream;
      if (got.ok()) live.push_back(got.value().addr);
    } else if (u < 0.93) {
      const auto i =
          static_cast<std::size_t>(rng.uniform_int(0, static_cast<std::int64_t>(live.size()) - 1));
      ASSERT_EQ(free_outcome(fresh, live[i]), "ok");
      ASSERT_EQ(free_outcome(ref, live[i]), "ok");
      freed.push_back(live[i]);
      live[i] = live.back();
      live.pop_back();
    } else if (u < 0.95 && !freed.empty()) {
      // A double free, a free inside a block or of a merged-away address: same refusal.
      const std::uint64_t addr = freed[static_cast<std::size_t>(rng.uniform_int(
                                     0, static_cast<std::int64_t>(freed.size()) - 1))] +
                                 (rng.bernoulli(0.5) ? 0 : 512);
      ASSERT_EQ(fresh.owns_live(addr), ref.owns_live(addr)) << addr;
      if (fresh.owns_live(addr)) continue;
      ASSERT_EQ(free_outcome(fresh, addr), free_outcome(ref, addr));
    } else if (u < 0.97) {
      ASSERT_EQ(fresh.empty_cache(), ref.empty_cache());
    } else {
      fresh.tick();
      ref.tick();
    }
    ASSERT_EQ(describe(fresh.stats()), describe(ref.stats()));
    ASSERT_EQ(fresh.largest_cached_block(), ref.largest_cached_block());
    ASSERT_EQ(fresh.cached_blocks(), ref.cached_blocks());
    ASSERT_EQ(dev_new.used_bytes(), dev_ref.used_bytes());
    ASSERT_EQ(dev_new.holes(), dev_ref.holes());
    if (step % 16 == 0) {
      ASSERT_EQ(fresh.check_invariants(), "");
    }
  }
}

TEST(ReferenceAllocator, SameChoicesUnderEveryConfiguration) {
  for (const bool coalesce : {false, true}) {
    for (const FitPolicy fit : {FitPolicy::kFirstFit, FitPolicy::kBestFit}) {
      for (const CrossStreamPolicy cross :
           {CrossStreamPolicy::kEventEdge, CrossStreamPolicy::kRefuse}) {
        for (const std::uint64_t idle : {std::uint64_t{0}, std::uint64_t{3}}) {
          AllocatorConfig cfg;
          cfg.coalesce = coalesce;
          cfg.fit = fit;
          cfg.cross_stream = cross;
          cfg.release_idle_after = idle;
          SCOPED_TRACE(::testing::Message()
                       << "coalesce=" << coalesce << " best=" << (fit == FitPolicy::kBestFit)
                       << " refuse=" << (cross == CrossStreamPolicy::kRefuse) << " idle=" << idle);
          // A roomy device (the bins fill up) and a tight one (flush-and-retry, OOMs).
          run_side_by_side(cfg, 1024 * kMiB, 7, 3000);
          run_side_by_side(cfg, 160 * kMiB, 11, 3000);
        }
      }
    }
  }
}

// Many cached blocks in one class: the trees get deep, first fit must still
// take the lowest address that fits and best fit the smallest.
TEST(ReferenceAllocator, DeepBinsKeepTheOrder) {
  for (const FitPolicy fit : {FitPolicy::kFirstFit, FitPolicy::kBestFit}) {
    AllocatorConfig cfg;
    cfg.fit = fit;
    Device dev_new(16384 * kMiB);
    Device dev_ref(16384 * kMiB);
    CachingAllocator fresh(dev_new, cfg);
    ReferenceAllocator ref(dev_ref, cfg);
    gpulab::Rng rng(3);
    std::vector<std::uint64_t> live;
    for (int i = 0; i < 3000; ++i) {
      const auto bytes = static_cast<std::uint64_t>(rng.uniform_int(2 * kMiB, 4 * kMiB - 1));
      const auto got = fresh.allocate(bytes, 0);
      ASSERT_EQ(describe(got), describe(ref.allocate(bytes, 0)));
      live.push_back(got.value().addr);
    }
    for (std::size_t i = 0; i < live.size(); i += 2) {
      fresh.free(live[i]);
      ref.free(live[i]);
    }
    ASSERT_EQ(fresh.check_invariants(), "");
    for (int i = 0; i < 2000; ++i) {
      const auto bytes = static_cast<std::uint64_t>(rng.uniform_int(2 * kMiB, 4 * kMiB - 1));
      ASSERT_EQ(describe(fresh.allocate(bytes, 0)), describe(ref.allocate(bytes, 0))) << i;
    }
    ASSERT_EQ(describe(fresh.stats()), describe(ref.stats()));
    ASSERT_EQ(fresh.check_invariants(), "");
  }
}

}  // namespace
}  // namespace caching_alloc
