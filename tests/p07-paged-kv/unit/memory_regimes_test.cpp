#include "paged_kv/memory_regimes.hpp"

#include <gtest/gtest.h>

namespace paged_kv {
namespace {

TEST(MemoryRegimes, NaiveContiguousFits32) {
  EXPECT_EQ(fit_contiguous(4096, 16, 2048), 32u);
}

TEST(MemoryRegimes, PagedFits85) {
  EXPECT_EQ(fit_paged(4096, 16, 768), 85u);
  EXPECT_EQ(fit_paged(4096, 16, 769), 83u);  // one token more costs a 49th block each
}

TEST(MemoryRegimes, PrefixSharing3350Versus214) {
  const SharingResult r = prefix_sharing(4096, 16, 50, 1024, 40);
  EXPECT_TRUE(r.fit_without_sharing);
  EXPECT_TRUE(r.fit_with_sharing);
  EXPECT_EQ(r.blocks_without_sharing, 3350u);  // 50 x ceil(1064/16)
  EXPECT_EQ(r.blocks_with_sharing, 214u);      // 64 shared + 50 x ceil(40/16)
}

TEST(MemoryRegimes, PrefixSharingReportsAnExhaustedPool) {
  const SharingResult r = prefix_sharing(1000, 16, 50, 1024, 40);
  EXPECT_FALSE(r.fit_without_sharing);
  EXPECT_TRUE(r.fit_with_sharing);
  EXPECT_EQ(r.served_without_sharing, 14u);  // 14 x 67 = 938 blocks; the 15th runs dry
  EXPECT_EQ(r.served_with_sharing, 50u);
  EXPECT_EQ(r.blocks_without_sharing, 1000u);
}

TEST(MemoryRegimes, CowTracePassesAndShowsTheFork) {
  const CowTrace t = cow_divergence(16, 20);
  EXPECT_TRUE(t.all_pass());
  ASSERT_EQ(t.steps.size(), 3u);
  EXPECT_EQ(t.steps[0].physical, 2u);
  EXPECT_EQ(t.steps[1].physical, 3u);
  EXPECT_EQ(t.steps[2].physical, 2u);
  EXPECT_EQ(t.steps[1].refcounts, (std::vector<std::pair<int, int>>{{0, 2}, {1, 1}, {2, 1}}));
}

TEST(MemoryRegimes, CowNeedsAPartialBlock) {
  EXPECT_THROW(cow_divergence(16, 32), std::invalid_argument);
}

}  // namespace
}  // namespace paged_kv
