// --metrics-out: the KV cache's block states and events as Prometheus families.
#include "paged_kv/metrics_out.hpp"

#include <gtest/gtest.h>

#include "paged_kv/block_allocator.hpp"

namespace paged_kv {
namespace {

TEST(KvMetricsOut, SharedBlocksCountsRefcountAboveOne) {
  BlockAllocator pool(8, 16);
  const auto a = pool.allocate();
  const auto b = pool.allocate();
  ASSERT_TRUE(a && b);
  EXPECT_EQ(pool.shared_blocks(), 0u);
  pool.share(*a);
  EXPECT_EQ(pool.shared_blocks(), 1u);
  pool.release(*a);
  EXPECT_EQ(pool.shared_blocks(), 0u);
}

TEST(KvMetricsOut, SharingPoolStatesAddUpToThePool) {
  const SharingResult r = prefix_sharing(4096, 16, 50, 1024, 40);
  const auto e = sharing_metrics(r, 4096);
  const auto* f = e.find("kv_cache_blocks");
  ASSERT_NE(f, nullptr);
  const double used = f->find({{"state", "used"}})->value;
  const double free_blocks = f->find({{"state", "free"}})->value;
  EXPECT_EQ(used, 214.0);
  EXPECT_EQ(used + free_blocks, 4096.0);
  EXPECT_EQ(f->find({{"state", "shared"}})->value, 64.0);  // the 1024-token prompt, stored once
  EXPECT_TRUE(gpulab::prom::parse(e.render()));
}

TEST(KvMetricsOut, PreemptionsPerPolicy) {
  PressureRun recompute;
  recompute.preemptions = 8;
  PressureRun swap;
  swap.policy = Recovery::kSwap;
  swap.preemptions = 5;
  const auto e = eviction_metrics({recompute, swap});
  const auto* f = e.find("kv_cache_preemptions_total");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->type(), gpulab::prom::MetricType::kCounter);
  EXPECT_EQ(f->find({{"policy", "recompute"}})->value, 8.0);
  EXPECT_EQ(f->find({{"policy", "swap"}})->value, 5.0);
}

}  // namespace
}  // namespace paged_kv
