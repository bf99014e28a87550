#include "membench/stream.hpp"

#include <gtest/gtest.h>

#include <atomic>

#include "membench/stride.hpp"
#include "membench/worker_pool.hpp"

namespace membench {
namespace {

TEST(StreamBytes, CountsWhatTheKernelAsksForWithoutWriteAllocate) {
  EXPECT_EQ(stream_bytes(StreamKernel::kCopy, 1000), 16000U);   // read a, write c
  EXPECT_EQ(stream_bytes(StreamKernel::kScale, 1000), 16000U);  // read c, write b
  EXPECT_EQ(stream_bytes(StreamKernel::kAdd, 1000), 24000U);    // read a, b, write c
  EXPECT_EQ(stream_bytes(StreamKernel::kTriad, 1000), 24000U);  // read b, c, write a
  EXPECT_EQ(stream_bytes(StreamKernel::kRead, 1000), 8000U);
  EXPECT_EQ(stream_bytes(StreamKernel::kWrite, 1000), 8000U);
}

TEST(StreamElements, AreAtLeastFourTimesTheLastLevelCache) {
  EXPECT_EQ(stream_elements_for(32U << 20), 4 * (32U << 20) / 8);
  EXPECT_EQ(stream_elements_for(1U << 20), 10'000'000U);  // STREAM's own minimum
}

TEST(RunStream, ValidatesTheArraysAndReportsEveryKernel) {
  WorkerPool pool(2, -1);
  const auto r = run_stream(pool, {100'000, 3});
  EXPECT_TRUE(r.valid) << r.validation;
  EXPECT_EQ(r.validation.rfind("Solution Validates", 0), 0U);
  ASSERT_EQ(r.rates.size(), std::size(kAllStreamKernels));
  for (const auto& rate : r.rates) {
    EXPECT_GT(rate.best_gbs, 0.0) << name(rate.kernel);
    EXPECT_LE(rate.min_s, rate.avg_s);
    EXPECT_LE(rate.avg_s, rate.max_s);
  }
}

TEST(Slice, CoversEveryItemOnceInWholeGrains) {
  for (int threads : {1, 2, 3, 7}) {
    std::size_t covered = 0, prev_end = 0;
    for (int t = 0; t < threads; ++t) {
      const auto [lo, hi] = slice(10'007, t, threads);
      EXPECT_EQ(lo, prev_end);
      if (hi < 10'007) {
        EXPECT_EQ(hi % 64, 0U);
      }
      covered += hi - lo;
      prev_end = hi;
    }
    EXPECT_EQ(covered, 10'007U);
  }
}

TEST(WorkerPool, RunsEveryWorkerOnceAndRethrows) {
  WorkerPool pool(3, -1);
  std::atomic<int> mask{0};
  pool.run([&](int t) { mask.fetch_or(1 << t); });
  EXPECT_EQ(mask.load(), 0b111);
  EXPECT_THROW(pool.run([](int t) {
    if (t == 1) throw std::runtime_error("boom");
  }),
               std::runtime_error);
  pool.run([&](int) {});  // still usable afterwards
}

TEST(Stride, LinesTouchedStopShrinkingAtOneElementPerLine) {
  const std::size_t n = 1 << 20;  // floats: 16 per 64-byte line
  EXPECT_EQ(lines_touched(n, 1), n / 16);
  EXPECT_EQ(lines_touched(n, 8), n / 16);
  EXPECT_EQ(lines_touched(n, 16), n / 16);
  EXPECT_EQ(lines_touched(n, 32), n / 32);
  EXPECT_EQ(lines_touched(n, 128), n / 128);
}

}  // namespace
}  // namespace membench
