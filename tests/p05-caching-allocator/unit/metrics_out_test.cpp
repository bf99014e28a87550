// --metrics-out: the allocator's end state under the platform's metric names.
#include <gtest/gtest.h>

#include "caching_alloc/metrics_out.hpp"
#include "gpulab/prom_text.hpp"

namespace caching_alloc {
namespace {

TEST(PlatformMetrics, CarryTheAllocatorsStateUnderTheContractNames) {
  Device dev(64 * kMiB);
  CachingAllocator alloc(dev);
  const auto a = alloc.allocate(3 * kMiB, 0);
  ASSERT_TRUE(static_cast<bool>(a));
  EXPECT_FALSE(static_cast<bool>(alloc.allocate(100 * kMiB, 0)));  // more than the device: one OOM
  const auto e = platform_metrics(alloc.stats(), alloc.largest_cached_block());
  const auto value = [&](const char* name) { return e.find(name)->find({})->value; };
  EXPECT_EQ(value("allocator_reserved_bytes"), static_cast<double>(alloc.stats().reserved_bytes));
  EXPECT_EQ(value("allocator_allocated_bytes"), static_cast<double>(3 * kMiB));
  EXPECT_EQ(value("allocator_largest_free_block_bytes"),
            static_cast<double>(alloc.largest_cached_block()));
  EXPECT_EQ(value("allocator_oom_total"), 1.0);
  EXPECT_EQ(e.find("allocator_oom_total")->type(), gpulab::prom::MetricType::kCounter);
  EXPECT_EQ(e.find("allocator_reserved_bytes")->type(), gpulab::prom::MetricType::kGauge);
  // What it renders is a valid exposition with the same four families.
  const auto parsed = gpulab::prom::parse(e.render());
  ASSERT_TRUE(parsed) << parsed.error().message;
  EXPECT_EQ(
      parsed.value().names(),
      (std::vector<std::string>{"allocator_allocated_bytes", "allocator_largest_free_block_bytes",
                                "allocator_oom_total", "allocator_reserved_bytes"}));
}

}  // namespace
}  // namespace caching_alloc
