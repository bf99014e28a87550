// The conversions the whole harness rests on: a wrong expected value would
// fail honest backends or pass a liar. Checked against known bit patterns,
// exhaustively by round trip, against the compiler's own float and _Float16
// conversions, and at every edge (ties, subnormals, overflow, NaN, -0).
#include "conformance/dtype.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>

#include "gpulab/rng.hpp"

namespace {

using conformance::decode;
using conformance::DType;
using conformance::encode;
using conformance::round_to;
using conformance::ulp;

TEST(DType, KnownBitPatterns) {
  EXPECT_EQ(encode(DType::kF32, 1.0), 0x3F800000u);
  EXPECT_EQ(encode(DType::kF32, -2.5), 0xC0200000u);
  EXPECT_EQ(encode(DType::kF16, 1.0), 0x3C00u);
  EXPECT_EQ(encode(DType::kF16, -2.0), 0xC000u);
  EXPECT_EQ(encode(DType::kF16, 65504.0), 0x7BFFu);
  EXPECT_EQ(encode(DType::kF16, 0.333251953125), 0x3555u);
  EXPECT_EQ(encode(DType::kBF16, 1.0), 0x3F80u);
  EXPECT_EQ(encode(DType::kBF16, 3.14159265358979), 0x4049u);  // 3.140625
  EXPECT_EQ(encode(DType::kBF16, 1.0 / 3.0), 0x3EABu);
  EXPECT_EQ(encode(DType::kFP8, 1.0), 0x38u);
  EXPECT_EQ(encode(DType::kFP8, -1.0), 0xB8u);
  EXPECT_EQ(encode(DType::kFP8, 448.0), 0x7Eu);
  EXPECT_EQ(encode(DType::kFP8, 0x1p-6), 0x08u);          // smallest normal
  EXPECT_EQ(encode(DType::kFP8, 0.875 * 0x1p-6), 0x07u);  // largest subnormal
  EXPECT_EQ(encode(DType::kFP8, 0x1p-9), 0x01u);          // smallest subnormal
}

TEST(DType, DecodeSpecials) {
  EXPECT_TRUE(std::isinf(decode(DType::kF16, 0x7C00u)));
  EXPECT_TRUE(std::isnan(decode(DType::kF16, 0x7E00u)));
  EXPECT_TRUE(std::isinf(decode(DType::kBF16, 0xFF80u)));
  EXPECT_LT(decode(DType::kBF16, 0xFF80u), 0);
  // E4M3 has no infinity: exponent 1111 holds 256..448, only mantissa 111 is NaN.
  EXPECT_EQ(decode(DType::kFP8, 0x78u), 256.0);
  EXPECT_EQ(decode(DType::kFP8, 0x7Eu), 448.0);
  EXPECT_TRUE(std::isnan(decode(DType::kFP8, 0x7Fu)));
  EXPECT_TRUE(std::isnan(decode(DType::kFP8, 0xFFu)));
  EXPECT_TRUE(std::signbit(decode(DType::kF16, 0x8000u)));
  EXPECT_EQ(decode(DType::kF16, 0x8000u), 0.0);
}

// Every finite, non-NaN pattern decodes to a value that encodes back to it.
void expect_round_trip(DType t, std::uint32_t patterns) {
  int checked = 0;
  for (std::uint32_t bits = 0; bits < patterns; ++bits) {
    const double v = decode(t, bits);
    if (std::isnan(v)) continue;
    ASSERT_EQ(encode(t, v), bits) << conformance::name_of(t) << " pattern " << bits;
    ASSERT_EQ(round_to(t, v), v);
    ++checked;
  }
  EXPECT_GT(checked, 0);
}

TEST(DType, ExhaustiveRoundTripF16) {
  expect_round_trip(DType::kF16, 1u << 16);
}
TEST(DType, ExhaustiveRoundTripBF16) {
  expect_round_trip(DType::kBF16, 1u << 16);
}
TEST(DType, ExhaustiveRoundTripFP8) {
  expect_round_trip(DType::kFP8, 1u << 8);
}

TEST(DType, DecodedValuesAreOrderedAndSpacedByUlp) {
  // Consecutive positive patterns are consecutive values, one ulp apart.
  for (DType t : {DType::kF16, DType::kBF16, DType::kFP8}) {
    const std::uint32_t top = t == DType::kFP8 ? 0x7Eu : (t == DType::kF16 ? 0x7BFFu : 0x7F7Fu);
    for (std::uint32_t bits = 0; bits < top; ++bits) {
      const double a = decode(t, bits), b = decode(t, bits + 1);
      ASSERT_LT(a, b) << conformance::name_of(t) << " " << bits;
      ASSERT_EQ(b - a, ulp(t, a)) << conformance::name_of(t) << " " << bits;
    }
  }
}

TEST(DType, F32MatchesTheCompilersConversion) {
  gpulab::Rng rng(7);
  for (int i = 0; i < 200000; ++i) {
    // Random doubles over a wide exponent range, plus exact float midpoints.
    double x =
        (rng.uniform01() * 2 - 1) * std::ldexp(1.0, static_cast<int>(rng.uniform_int(-150, 127)));
    if (i % 4 == 0) {
      const float f = static_cast<float>(x);
      x = static_cast<double>(f) +
          0.5 * static_cast<double>(std::nextafter(f, std::numeric_limits<float>::infinity()) - f);
    }
    ASSERT_EQ(round_to(DType::kF32, x), static_cast<double>(static_cast<float>(x))) << x;
  }
}

#ifdef __FLT16_MAX__
TEST(DType, F16MatchesTheCompilersDirectConversion) {
  gpulab::Rng rng(11);
  for (int i = 0; i < 200000; ++i) {
    double x =
        (rng.uniform01() * 2 - 1) * std::ldexp(1.0, static_cast<int>(rng.uniform_int(-27, 16)));
    if (i % 3 == 0) {  // exact midpoints between neighbouring halves, and one double ulp off them
      const double lo = decode(DType::kF16, static_cast<std::uint32_t>(rng.uniform_int(0, 0x7BFE)));
      x = lo + ulp(DType::kF16, lo) / 2;
      if (i % 2 == 0) x = std::nextafter(x, i % 4 == 0 ? 0.0 : 1e9);
    }
    const auto h = static_cast<_Float16>(x);
    ASSERT_EQ(round_to(DType::kF16, x), static_cast<double>(h)) << x;
  }
}
#endif

TEST(DType, TiesGoToEven) {
  // 1 + half an ulp: tie between 1 (even) and 1 + ulp (odd) -> 1.
  EXPECT_EQ(round_to(DType::kF16, 1.0 + 0x1p-11), 1.0);
  // 1 + 1.5 ulp: tie between 1 + ulp (odd) and 1 + 2 ulp (even) -> 1 + 2 ulp.
  EXPECT_EQ(round_to(DType::kF16, 1.0 + 3 * 0x1p-11), 1.0 + 0x1p-9);
  EXPECT_EQ(round_to(DType::kBF16, 1.0 + 0x1p-8), 1.0);
  EXPECT_EQ(round_to(DType::kBF16, 1.0 + 3 * 0x1p-8), 1.0 + 0x1p-6);
  EXPECT_EQ(round_to(DType::kFP8, 1.0625), 1.0);  // 1 + ulp/2 (ulp 0.125)
  EXPECT_EQ(round_to(DType::kFP8, 1.1875), 1.25);
  EXPECT_EQ(round_to(DType::kFP8, -1.1875), -1.25);
}

TEST(DType, RoundsOnceFromDoubleNotThroughFloat) {
  // Just above a half-way point by less than float can see: float rounds it
  // onto the tie (then ties-to-even gives 1.0); rounding straight from double
  // sees it is above the tie and must give 1 + 2^-10.
  const double x = 1.0 + 0x1p-11 + 0x1p-40;
  EXPECT_EQ(round_to(DType::kF16, x), 1.0 + 0x1p-10);
  EXPECT_EQ(round_to(DType::kF16, static_cast<double>(static_cast<float>(x))), 1.0);
  EXPECT_EQ(round_to(DType::kBF16, 1.0 + 0x1p-8 + 0x1p-40), 1.0 + 0x1p-7);
  EXPECT_EQ(round_to(DType::kFP8, 1.0625 + 0x1p-40), 1.125);
}

TEST(DType, Subnormals) {
  EXPECT_EQ(encode(DType::kF16, 0x1p-24), 0x0001u);
  EXPECT_EQ(encode(DType::kF16, 0x1p-25), 0x0000u);  // tie -> even (zero)
  EXPECT_EQ(encode(DType::kF16, 0x1p-25 + 0x1p-40), 0x0001u);
  EXPECT_EQ(encode(DType::kF16, 3 * 0x1p-25), 0x0002u);        // 1.5 -> 2
  EXPECT_EQ(encode(DType::kF16, 0x1p-14 - 0x1p-24), 0x03FFu);  // largest subnormal
  EXPECT_EQ(encode(DType::kFP8, 0x1p-10), 0x00u);              // half the smallest: tie -> 0
  EXPECT_EQ(encode(DType::kFP8, 3 * 0x1p-10), 0x02u);
  EXPECT_EQ(encode(DType::kFP8, -0x1p-9), 0x81u);
  EXPECT_EQ(encode(DType::kBF16, 0x1p-133), 0x0001u);  // bf16 smallest subnormal
  EXPECT_EQ(ulp(DType::kF16, 0.0), 0x1p-24);
  EXPECT_EQ(ulp(DType::kF16, 1e-7), 0x1p-24);
  EXPECT_EQ(ulp(DType::kFP8, 0.0), 0x1p-9);
}

TEST(DType, OverflowSaturatesOrGoesToInfinity) {
  EXPECT_EQ(round_to(DType::kF16, 65519.99), 65504.0);
  EXPECT_TRUE(std::isinf(round_to(DType::kF16, 65520.0)));  // the tie rounds up to 2^16: overflow
  EXPECT_EQ(encode(DType::kF16, -1e9), 0xFC00u);
  EXPECT_TRUE(std::isinf(round_to(DType::kBF16, 3.4e38)));
  EXPECT_EQ(round_to(DType::kBF16, 3.39e38), 3.3895313892515355e38);  // below the overflow tie
  // E4M3 saturates (.satfinite), including infinities; NaN stays NaN (0x7F).
  EXPECT_EQ(round_to(DType::kFP8, 460.0), 448.0);
  EXPECT_EQ(round_to(DType::kFP8, 1e9), 448.0);
  EXPECT_EQ(round_to(DType::kFP8, -std::numeric_limits<double>::infinity()), -448.0);
  EXPECT_EQ(encode(DType::kFP8, std::numeric_limits<double>::quiet_NaN()), 0x7Fu);
  EXPECT_EQ(encode(DType::kF16, std::numeric_limits<double>::quiet_NaN()), 0x7E00u);
}

TEST(DType, SignedZeroSurvives) {
  EXPECT_EQ(encode(DType::kF16, -0.0), 0x8000u);
  EXPECT_EQ(encode(DType::kFP8, -0.0), 0x80u);
  EXPECT_EQ(encode(DType::kF16, -0x1p-30), 0x8000u);  // underflows to -0
}

TEST(DType, UlpAndRoundoff) {
  EXPECT_EQ(ulp(DType::kF32, 1.0), 0x1p-23);
  EXPECT_EQ(ulp(DType::kF16, 1.0), 0x1p-10);
  EXPECT_EQ(ulp(DType::kF16, 1.99), 0x1p-10);
  EXPECT_EQ(ulp(DType::kF16, 2.0), 0x1p-9);
  EXPECT_EQ(ulp(DType::kBF16, 1.0), 0x1p-7);
  EXPECT_EQ(ulp(DType::kFP8, 1.0), 0.125);
  EXPECT_EQ(ulp(DType::kFP8, 300.0), 32.0);
  EXPECT_EQ(conformance::unit_roundoff(DType::kF16), 0x1p-11);
  EXPECT_EQ(conformance::unit_roundoff(DType::kFP8), 0x1p-4);
}

TEST(DType, BuffersAreLittleEndianElements) {
  const std::vector<double> v{1.0, -2.0};
  const auto bytes = conformance::encode_buffer(DType::kF16, v);
  ASSERT_EQ(bytes.size(), 4u);
  EXPECT_EQ(bytes[0], 0x00);
  EXPECT_EQ(bytes[1], 0x3C);
  EXPECT_EQ(bytes[3], 0xC0);
  EXPECT_EQ(conformance::decode_buffer(DType::kF16, bytes), v);
  EXPECT_THROW(conformance::decode_buffer(DType::kF32, std::vector<std::uint8_t>(3)),
               std::invalid_argument);
}

TEST(DType, Names) {
  EXPECT_EQ(conformance::parse_dtype("fp16"), DType::kF16);
  EXPECT_EQ(conformance::parse_dtype("BF16"), DType::kBF16);
  EXPECT_EQ(conformance::parse_dtype("e4m3"), DType::kFP8);
  EXPECT_EQ(conformance::parse_dtype("f64"), std::nullopt);
  EXPECT_EQ(conformance::name_of(DType::kFP8), "FP8");
}

}  // namespace
