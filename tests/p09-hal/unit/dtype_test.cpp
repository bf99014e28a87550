// The narrow-format conversions every client and backend share (ABI header helpers).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>

#include "hal/hal.hpp"

namespace hal = gpulab::hal;

TEST(DType, HalfRoundTripsEveryFiniteValueExactly) {
  for (std::uint32_t h = 0; h < 0x10000u; ++h) {
    const auto bits = static_cast<std::uint16_t>(h);
    if ((bits & 0x7C00u) == 0x7C00u) continue;  // inf / NaN
    EXPECT_EQ(hal::float_to_half(hal::half_to_float(bits)), bits) << std::hex << h;
  }
}

TEST(DType, HalfRoundsToNearestEven) {
  EXPECT_EQ(hal::half_to_float(hal::float_to_half(1.0f)), 1.0f);
  // 1 + 2^-11 is halfway between 1 and 1 + 2^-10: ties to even (1.0).
  EXPECT_EQ(hal::half_to_float(hal::float_to_half(1.0f + std::ldexp(1.0f, -11))), 1.0f);
  // 1 + 3*2^-11 is halfway between 1+2^-10 and 1+2^-9: ties to even (1 + 2^-9).
  EXPECT_EQ(hal::half_to_float(hal::float_to_half(1.0f + 3 * std::ldexp(1.0f, -11))), 1.0f + std::ldexp(1.0f, -9));
  EXPECT_EQ(hal::half_to_float(hal::float_to_half(65504.0f)), 65504.0f);
  EXPECT_TRUE(std::isinf(hal::half_to_float(hal::float_to_half(70000.0f))));
  EXPECT_EQ(hal::half_to_float(hal::float_to_half(std::ldexp(1.0f, -24))), std::ldexp(1.0f, -24));  // smallest subnormal
  EXPECT_EQ(hal::half_to_float(hal::float_to_half(std::ldexp(1.0f, -26))), 0.0f);
}

TEST(DType, Bf16IsTheUpperHalfRounded) {
  EXPECT_EQ(hal::float_to_bf16(1.0f), 0x3F80);
  EXPECT_EQ(hal::bf16_to_float(hal::float_to_bf16(3.140625f)), 3.140625f);
  // 1 + 2^-8 is halfway between 1 and 1 + 2^-7: ties to even.
  EXPECT_EQ(hal::bf16_to_float(hal::float_to_bf16(1.0f + std::ldexp(1.0f, -8))), 1.0f);
  EXPECT_TRUE(std::isnan(hal::bf16_to_float(hal::float_to_bf16(NAN))));
}

TEST(DType, Fp8E4M3RoundTripsAllCodesAndSaturates) {
  for (std::uint32_t v = 0; v < 256; ++v) {
    const auto code = static_cast<std::uint8_t>(v);
    if ((code & 0x7F) == 0x7F) {
      EXPECT_TRUE(std::isnan(hal::fp8_e4m3_to_float(code)));
      continue;
    }
    if (code == 0x80) continue;  // -0 encodes back as -0 (0x80): same value as +0
    EXPECT_EQ(hal::float_to_fp8_e4m3(hal::fp8_e4m3_to_float(code)), code) << v;
  }
  EXPECT_EQ(hal::fp8_e4m3_to_float(0x7E), 448.0f);
  EXPECT_EQ(hal::fp8_e4m3_to_float(0x01), std::ldexp(1.0f, -9));
  EXPECT_EQ(hal::fp8_e4m3_to_float(hal::float_to_fp8_e4m3(1000.0f)), 448.0f);
  EXPECT_EQ(hal::fp8_e4m3_to_float(hal::float_to_fp8_e4m3(-1000.0f)), -448.0f);
  EXPECT_EQ(hal::fp8_e4m3_to_float(hal::float_to_fp8_e4m3(1.0625f)), 1.0f);  // halfway 1 and 1.125: even
}

TEST(DType, EncodeDecodeAndNames) {
  const std::vector<float> v = {1.5f, -2.25f, 0.0f};
  for (hal::DType d : hal::kAllDTypes) {
    const auto bytes = hal::encode(d, v);
    EXPECT_EQ(bytes.size(), v.size() * hal::element_size(d));
    EXPECT_EQ(hal::decode(d, bytes.data(), v.size()), v) << hal::flag_name(d);
  }
  EXPECT_EQ(hal::dtype_mask_string(GPULAB_HAL_DTYPE_F32 | GPULAB_HAL_DTYPE_F16), "F32|F16");
  EXPECT_EQ(hal::dtype_mask_string(0), "-");
  EXPECT_EQ(hal::request_name(hal::DType::kF16), "FP16");
  EXPECT_EQ(hal::parse_dtype("fp16"), hal::DType::kF16);
  EXPECT_EQ(hal::parse_dtype("F32"), hal::DType::kF32);
  EXPECT_FALSE(hal::parse_dtype("fp64").has_value());
}
