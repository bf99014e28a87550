#include "membench/roofline.hpp"

#include <gtest/gtest.h>

#include "membench/roofline_kernels.hpp"
#include "membench/worker_pool.hpp"

namespace membench {
namespace {

// kVectorAddAi is a compile-time constant: checking it at run time against a literal could only
// fail if someone edited both. Its definition is checked where it belongs, at compile time, and
// the run-time test below ties the numerator to what the placed kernel actually does.
static_assert(kVectorAddAi == 1.0 / (3 * sizeof(float)), "vector_add: 1 FLOP per a, b, c float");

TEST(ArithmeticIntensity, VectorAddCountsOneFlopPerElement) {
  WorkerPool pool(2, -1);
  const std::size_t n = 1 << 16;
  const KernelTiming r = time_vector_add(pool, n, 3);
  EXPECT_TRUE(r.correct);
  ASSERT_GT(r.seconds, 0.0);
  // GFLOP/s x seconds = the FLOPs the kernel claims: one per element, as the AI assumes.
  EXPECT_NEAR(r.gflops * 1e9 * r.seconds, static_cast<double>(n), 1e-6 * static_cast<double>(n));
}

TEST(ArithmeticIntensity, MatchesTheCurriculum) {
  EXPECT_NEAR(blocked_matmul_ai(64), 10.667, 1e-3);
  EXPECT_DOUBLE_EQ(blocked_matmul_ai(6), 1.0);
  EXPECT_DOUBLE_EQ(decode_ai(2.0), 1.0);  // fp16 weights: 2 FLOPs per 2 bytes
  EXPECT_DOUBLE_EQ(decode_ai(1.0), 2.0);
}

TEST(Roofline, AttainableIsTheLowerOfTheTwoRoofs) {
  EXPECT_DOUBLE_EQ(attainable(100.0, 10.0, 1.0), 10.0);    // slanted roof
  EXPECT_DOUBLE_EQ(attainable(100.0, 10.0, 50.0), 100.0);  // flat roof
  EXPECT_DOUBLE_EQ(attainable(100.0, 10.0, 10.0), 100.0);  // the ridge
  EXPECT_NEAR(attainable(166.0, 61.2, kVectorAddAi), 5.1,
              0.01);  // the curriculum's vector_add ceiling
  EXPECT_DOUBLE_EQ(ridge_point(100.0, 10.0), 10.0);
  EXPECT_EQ(bound_verdict(1.0, 10.0), "memory-bound");
  EXPECT_EQ(bound_verdict(10.0, 10.0), "compute-bound");
}

TEST(SpecTable, HasTheCurriculumsChipsAndRidges) {
  const auto h100 = find_accelerator("h100-sxm");
  ASSERT_TRUE(h100);
  EXPECT_NEAR(ridge_point(h100->peak_tflops, h100->bandwidth_tbs), 295.2, 0.1);
  const auto a100 = find_accelerator("A100-80GB");
  ASSERT_TRUE(a100);
  EXPECT_NEAR(ridge_point(a100->peak_tflops, a100->bandwidth_tbs), 153.0, 0.1);
  EXPECT_NEAR(ridge_point(312.0, 2.0), 156.0, 1e-9);  // WARMUP Ch. 7's rounded A100 figure
  for (const char* name : {"A100-40GB", "H200-SXM", "MI300X"})
    EXPECT_TRUE(find_accelerator(name)) << name;
  EXPECT_FALSE(find_accelerator("B9000"));
  for (const auto& a : accelerator_table()) EXPECT_FALSE(a.source.empty()) << a.name;
}

TEST(Decode, SevenBillionFp16OnH100IsAbout240TokensPerSecond) {
  const auto h100 = find_accelerator("H100-SXM");
  ASSERT_TRUE(h100);
  const double tps = decode_tokens_per_s(h100->bandwidth_tbs, 7.0, 2.0);
  EXPECT_NEAR(tps, 239.3, 0.1);
  EXPECT_NEAR(1000.0 / tps, 4.18, 0.01);  // ms per token
  // Decode sits two orders of magnitude left of the ridge.
  EXPECT_EQ(bound_verdict(decode_ai(2.0), ridge_point(h100->peak_tflops, h100->bandwidth_tbs)),
            "memory-bound");
}

}  // namespace
}  // namespace membench
