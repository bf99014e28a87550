#include "ring_allreduce/memory_budget.hpp"

#include <gtest/gtest.h>

#include <limits>

#include "gpulab/errors.hpp"
#include "ring_allreduce/experiments.hpp"
#include "ring_allreduce/launcher.hpp"

namespace {

TEST(MemoryBudget, TheHeadlineNeedsItsVectorTwiceAndTheNaiveGather) {
  // 2^27 f64 = 1 GiB per rank; the naive all-reduce gathers all 64 of them.
  const ring::RankJob job = ring::headline_job({std::size_t{1} << 27, ring::DType::kF64, -1, -1});
  EXPECT_EQ(job.memory.per_rank(64), (std::uint64_t{1} << 30) * 66);
  EXPECT_EQ(job.memory.total(64), (std::uint64_t{1} << 30) * 66 * 64);
  EXPECT_EQ(ring::memory_problem(64, job.memory, std::uint64_t{200} << 30),
            "this run needs about 4.5 TB (64 ranks x 70.9 GB each), more than the 214.7 GB this machine "
            "has available");
  EXPECT_EQ(ring::memory_problem(8, ring::headline_job({80'000}).memory, std::uint64_t{1} << 30), "");
}

TEST(MemoryBudget, TotalsSaturateInsteadOfWrapping) {
  const ring::MemoryNeed huge{std::numeric_limits<std::uint64_t>::max() / 2, 1};
  EXPECT_EQ(huge.total(4), std::numeric_limits<std::uint64_t>::max());
  EXPECT_NE(ring::memory_problem(4, huge, std::numeric_limits<std::uint64_t>::max() - 1), "");
}

TEST(MemoryBudget, LaunchLocalRefusesBeforeForking) {
  ring::LaunchOptions opts;
  opts.world = 4;
  // More than any machine has; no rank may start (the job would fail the test).
  const ring::RankJob job([](ring::Transport&) -> gpulab::Json { throw std::logic_error("a rank ran"); },
                          ring::MemoryNeed{std::uint64_t{1} << 62, 0});
  EXPECT_THROW(ring::launch_local(opts, job), gpulab::UsageError);
}

TEST(MemoryBudget, BytesReadLikeFreeDashH) {
  EXPECT_EQ(ring::format_bytes(999), "999 B");
  EXPECT_EQ(ring::format_bytes(21'455'580'000), "21.5 GB");
  EXPECT_EQ(ring::format_bytes(4'500'000'000'000), "4.5 TB");
}

}  // namespace
