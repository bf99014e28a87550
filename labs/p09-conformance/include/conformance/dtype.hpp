// The element types the conformance matrix covers, and exact conversions
// between double and each of them. The reference of every test is computed in
// double and then rounded *once* into the output type (round to nearest, ties
// to even), so the expected value is the best answer that type can hold.
// Rounding straight from double matters: double -> float -> half rounds twice
// and is wrong for about one input in 2^13 near a tie.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

namespace conformance {

enum class DType : std::uint8_t {
  kF32,   // IEEE binary32
  kF16,   // IEEE binary16: 5 exponent bits, 10 mantissa bits
  kBF16,  // bfloat16: binary32's exponent, 7 mantissa bits
  kFP8,   // OCP FP8 E4M3 ("e4m3fn"): no infinities, one NaN per sign, max 448
};

// The four element types of the HAL ABI (gpulab_hal.h), in matrix order.
inline constexpr DType kAllDTypes[] = {DType::kF32, DType::kF16, DType::kBF16, DType::kFP8};

// How a binary floating-point format is laid out.
struct Format {
  int exponent_bits;
  int mantissa_bits;  // stored fraction bits (the leading 1 is implicit)
  int bias;
  bool has_infinity;  // false: E4M3, whose all-ones exponent still holds finite values
  double max_finite;
  double min_normal;     // 2^(1 - bias)
  double min_subnormal;  // 2^(1 - bias - mantissa_bits)
  int bytes;             // storage size of one element
};

const Format& format_of(DType t);
std::string_view name_of(DType t);  // "F32", "F16", "BF16", "FP8" (the ABI's capability names)
// Accepts those names, fp32/fp16, and e4m3 / fp8-e4m3, case-insensitive.
std::optional<DType> parse_dtype(std::string_view s);

// The value of type `t` nearest to x (ties to even). Overflow gives infinity
// where the format has one; E4M3 saturates to +-448 (NVIDIA's `.satfinite`),
// and maps infinities to +-448 too. NaN stays NaN; the sign of zero is kept.
double round_to(DType t, double x);
// The bit pattern of round_to(t, x), in the low format_of(t).bytes*8 bits.
std::uint32_t encode(DType t, double x);
// The exact value of a bit pattern (only the low bits of the format are read).
double decode(DType t, std::uint32_t bits);
// The gap between |x| and the next larger value of `t` (for x in the subnormal
// range and for 0, the smallest subnormal). Tolerances are written in these units.
double ulp(DType t, double x);
// Half an ulp at 1: the largest relative error of one correct rounding.
double unit_roundoff(DType t);

// Whole buffers in the storage layout a backend sees (little-endian elements).
std::vector<std::uint8_t> encode_buffer(DType t, std::span<const double> values);
std::vector<double> decode_buffer(DType t, std::span<const std::uint8_t> bytes);

}  // namespace conformance
