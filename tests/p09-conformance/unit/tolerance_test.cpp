// The tolerance is the harness's judgement: tight enough that wrong results
// fail, loose enough that every correct binary32-accumulating implementation
// passes, whatever its summation order. Both directions are tested here.
#include "conformance/tolerance.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "conformance/reference.hpp"

namespace {

using namespace conformance;

TEST(Tolerance, ExactlyAtTheBoundPassesJustBeyondFails) {
  const std::vector<double> exact{1.0};
  const std::vector<double> bound{0x1p-10};
  EXPECT_TRUE(check_elements(DType::kF16, std::vector<double>{1.0 + 0x1p-10}, exact, bound).pass());
  const auto r = check_elements(DType::kF16, std::vector<double>{1.0 + 0x1p-9}, exact, bound);
  EXPECT_FALSE(r.pass());
  ASSERT_TRUE(r.worst.has_value());
  EXPECT_EQ(r.worst->index, 0u);
  EXPECT_DOUBLE_EQ(r.worst_ratio, 2.0);
}

TEST(Tolerance, ComparesWithTheRoundedReference) {
  // exact 1 + 0.4 ulp rounds to 1.0: a backend returning 1.0 is exact, zero error.
  const double e = 1.0 + 0.4 * 0x1p-10;
  const auto r = check_elements(DType::kF16, std::vector<double>{1.0}, std::vector<double>{e},
                                std::vector<double>{1e-9});
  EXPECT_TRUE(r.pass());
  EXPECT_EQ(r.worst_ratio, 0.0);
}

TEST(Tolerance, NanAndInfinityAlwaysFail) {
  const std::vector<double> exact{1.0, 2.0};
  const std::vector<double> bound{1e30, 1e30};
  const auto r = check_elements(
      DType::kF32, std::vector<double>{std::nan(""), std::numeric_limits<double>::infinity()},
      exact, bound);
  EXPECT_EQ(r.bad, 2u);
  EXPECT_TRUE(std::isinf(r.worst_ratio));
}

TEST(Tolerance, ZeroBoundDemandsEquality) {
  const std::vector<double> exact{7, 8};
  const std::vector<double> bound{0, 0};
  EXPECT_TRUE(check_elements(DType::kF32, std::vector<double>{7, 8}, exact, bound).pass());
  EXPECT_EQ(check_elements(DType::kF32, std::vector<double>{7, 9}, exact, bound).bad, 1u);
}

TEST(Tolerance, BoundGrowsWithTheReductionAndTheDType) {
  // One output ulp with nothing to reduce...
  EXPECT_EQ(element_bound(DType::kF16, 1.0, 0, 0), 0x1p-10);
  EXPECT_EQ(element_bound(DType::kBF16, 1.0, 0, 0), 0x1p-7);
  EXPECT_EQ(element_bound(DType::kFP8, 1.0, 0, 0), 0.125);
  EXPECT_EQ(element_bound(DType::kF32, 1.0, 0, 0), 0x1p-23);
  // ...plus n * 2^-24 * sum|terms| for a reduction.
  EXPECT_DOUBLE_EQ(element_bound(DType::kF32, 1.0, 256, 64.0) - 0x1p-23, 256 * 0x1p-24 * 64.0);
  // The ulp is taken where the reduction can push the value: just below 2, into [2, 4).
  EXPECT_EQ(element_bound(DType::kF16, 2.0 - 0x1p-30, 1, 1.0) - 0x1p-24, 0x1p-9);
}

TEST(Tolerance, TinyResultsMayFlushToZero) {
  // F16: below the smallest normal (2^-14) a zero is accepted; above it, not.
  const double tiny = 0x1p-16;
  const double b = element_bound(DType::kF16, tiny, 0, 0);
  EXPECT_GE(b, 0x1p-14);
  EXPECT_TRUE(check_elements(DType::kF16, std::vector<double>{0.0}, std::vector<double>{tiny},
                             std::vector<double>{b})
                  .pass());
  const double normal = 0x1p-13;
  EXPECT_FALSE(check_elements(DType::kF16, std::vector<double>{0.0}, std::vector<double>{normal},
                              std::vector<double>{element_bound(DType::kF16, normal, 0, 0)})
                   .pass());
}

TEST(Tolerance, Rules) {
  EXPECT_EQ(rule_for(DType::kF16).flush_below, 0x1p-14);
  EXPECT_EQ(rule_for(DType::kFP8).flush_below, 0x1p-6);
  EXPECT_EQ(describe_rule(DType::kF16), "1 ulp + n*2^-24*sum|terms|, flush below 6.1e-05");
}

TEST(Reference, MatmulAndSoftmaxByHand) {
  // [1 2; 3 4] * [5 6; 7 8] = [19 22; 43 50]
  EXPECT_EQ(reference_matmul({1, 2, 3, 4}, {5, 6, 7, 8}, 2, 2, 2),
            (std::vector<double>{19, 22, 43, 50}));
  EXPECT_EQ(reference_matmul({}, {}, 2, 3, 0), std::vector<double>(6, 0.0));  // k = 0: zeros
  const auto s = reference_softmax({0, std::log(3.0)}, 1, 2);
  EXPECT_NEAR(s[0], 0.25, 1e-15);
  EXPECT_NEAR(s[1], 0.75, 1e-15);
  // Shift-invariant, and stable at +1000.
  const auto big = reference_softmax({1000, 1000 + std::log(3.0)}, 1, 2);
  EXPECT_NEAR(big[1], 0.75, 1e-12);
}

TEST(Reference, InputsAreExactValuesOfTheDType) {
  Case c{Op::kMatmul, DType::kFP8, {7, 13, 5, ""}, 42};
  const CaseData d = make_case_data(c);
  ASSERT_EQ(d.inputs.size(), 2u);
  EXPECT_EQ(d.inputs[0].size(), 35u);
  EXPECT_EQ(d.inputs[1].size(), 65u);
  for (const auto& in : d.inputs)
    for (double v : in) EXPECT_EQ(round_to(DType::kFP8, v), v);
  EXPECT_EQ(d.exact.size(), 91u);
  // Same seed, same case: same numbers.
  EXPECT_EQ(make_case_data(c).exact, d.exact);
}

TEST(Reference, SoftmaxRowsAreShiftedBeyondBinary32sExpRange) {
  Case c{Op::kSoftmax, DType::kF32, {3, 5, 0, ""}, 3};
  const CaseData d = make_case_data(c);
  const auto& x = d.inputs[0];
  EXPECT_LT(x[0], -90);  // row 0: -100 +- 4
  EXPECT_GT(x[10], 90);  // row 2: +100 +- 4: exp overflows binary32 without the max subtraction
  EXPECT_GT(std::exp(static_cast<float>(x[10])), 3e38f);
}

}  // namespace
