// Random allocate/free/empty_cache/tick sequences under every configuration:
// after each operation every invariant still holds, and the driver holds
// exactly what the allocator says it reserved.
#include <gtest/gtest.h>

#include <vector>

#include "caching_alloc/caching_allocator.hpp"
#include "gpulab/rng.hpp"

namespace caching_alloc {
namespace {

TEST(Invariants, RandomOperationsUnderEveryConfiguration) {
  for (const bool coalesce : {false, true}) {
    for (const FitPolicy fit : {FitPolicy::kFirstFit, FitPolicy::kBestFit}) {
      for (const CrossStreamPolicy cross :
           {CrossStreamPolicy::kEventEdge, CrossStreamPolicy::kRefuse}) {
        AllocatorConfig cfg;
        cfg.coalesce = coalesce;
        cfg.fit = fit;
        cfg.cross_stream = cross;
        cfg.release_idle_after = coalesce ? 2 : 0;
        SCOPED_TRACE(::testing::Message()
                     << "coalesce=" << coalesce << " best=" << (fit == FitPolicy::kBestFit)
                     << " refuse=" << (cross == CrossStreamPolicy::kRefuse));
        Device dev(512 * kMiB);
        CachingAllocator a(dev, cfg);
        gpulab::Rng rng(42);
        std::vector<std::uint64_t> live;
        for (int step = 0; step < 2000; ++step) {
          const double u = rng.uniform01();
          if (u < 0.55 || live.empty()) {
            // Mostly small and medium sizes, sometimes a large one.
            const std::uint64_t bytes =
                rng.bernoulli(0.1)
                    ? static_cast<std::uint64_t>(rng.uniform_int(10 * kMiB, 40 * kMiB))
                    : static_cast<std::uint64_t>(rng.uniform_int(1, 6 * kMiB));
            auto r = a.allocate(bytes, static_cast<StreamId>(rng.uniform_int(0, 2)));
            if (r) live.push_back(r.value().addr);
          } else if (u < 0.97) {
            const auto i = static_cast<std::size_t>(
                rng.uniform_int(0, static_cast<std::int64_t>(live.size()) - 1));
            a.free(live[i]);
            live[i] = live.back();
            live.pop_back();
          } else if (u < 0.99) {
            a.empty_cache();
          } else {
            a.tick();
          }
          ASSERT_EQ(a.check_invariants(), "") << "after step " << step;
          ASSERT_EQ(dev.used_bytes(), a.stats().reserved_bytes) << "after step " << step;
          ASSERT_EQ(a.stats().active_blocks, live.size());
        }
        for (const auto addr : live) a.free(addr);
        EXPECT_EQ(a.stats().allocated_bytes, 0u);
        if (coalesce && cross == CrossStreamPolicy::kRefuse) {
          // One stream per segment: once all is free, every segment merges back whole.
          a.empty_cache();
          EXPECT_EQ(a.stats().reserved_bytes, 0u);
        }
      }
    }
  }
}

}  // namespace
}  // namespace caching_alloc
