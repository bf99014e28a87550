#include "conformance/dtype.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace conformance {
namespace {

constexpr Format make_format(int e, int m, bool inf, double max_finite, int bytes) {
  // constexpr-friendly powers of two.
  const int bias = (1 << (e - 1)) - 1;
  double min_normal = 1.0;
  for (int i = 0; i < bias - 1; ++i) min_normal /= 2.0;
  double min_sub = min_normal;
  for (int i = 0; i < m; ++i) min_sub /= 2.0;
  return Format{e, m, bias, inf, max_finite, min_normal, min_sub, bytes};
}

// Largest finite values: (2 - 2^-m) * 2^emax, except E4M3, whose top binade
// gives up only its all-ones mantissa (NaN): 1.75 * 2^8 = 448.
constexpr Format kF32 = make_format(8, 23, true, 3.4028234663852886e38, 4);
constexpr Format kF16 = make_format(5, 10, true, 65504.0, 2);
constexpr Format kBF16 = make_format(8, 7, true, 3.3895313892515355e38, 2);
constexpr Format kE4M3 = make_format(4, 3, false, 448.0, 1);

// Round a non-negative integer-valued-or-not q to an integer, ties to even,
// without depending on the floating-point environment's rounding mode.
double round_half_even(double q) {
  const double fl = std::floor(q);
  const double diff = q - fl;  // exact: q < 2^53
  if (diff > 0.5) return fl + 1.0;
  if (diff < 0.5) return fl;
  return std::fmod(fl, 2.0) == 0.0 ? fl : fl + 1.0;
}

int binade_exponent(const Format& f, double a) {  // a > 0 finite; exponent of its ulp's binade
  const int emin = 1 - f.bias;
  return std::max(std::ilogb(a), emin);
}

}  // namespace

const Format& format_of(DType t) {
  switch (t) {
    case DType::kF32:
      return kF32;
    case DType::kF16:
      return kF16;
    case DType::kBF16:
      return kBF16;
    case DType::kFP8:
      return kE4M3;
  }
  throw std::logic_error("unknown dtype");
}

std::string_view name_of(DType t) {
  switch (t) {
    case DType::kF32:
      return "F32";
    case DType::kF16:
      return "F16";
    case DType::kBF16:
      return "BF16";
    case DType::kFP8:
      return "FP8";
  }
  return "?";
}

std::optional<DType> parse_dtype(std::string_view s) {
  std::string lower(s);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (lower == "f32" || lower == "fp32") return DType::kF32;
  if (lower == "f16" || lower == "fp16") return DType::kF16;
  if (lower == "bf16") return DType::kBF16;
  if (lower == "fp8" || lower == "e4m3" || lower == "fp8-e4m3") return DType::kFP8;
  return std::nullopt;
}

double round_to(DType t, double x) {
  const Format& f = format_of(t);
  if (std::isnan(x)) return std::numeric_limits<double>::quiet_NaN();
  if (std::isinf(x)) {
    if (f.has_infinity) return x;
    return std::copysign(f.max_finite, x);
  }
  if (x == 0.0) return x;  // keeps the sign of zero
  const double a = std::fabs(x);
  const int e = binade_exponent(f, a);
  // Scale so that one ulp of the format is 1, round to an integer, scale back.
  // Both scalings are by powers of two and exact for every value that matters.
  const double q = std::ldexp(a, f.mantissa_bits - e);
  double r = std::ldexp(round_half_even(q), e - f.mantissa_bits);
  if (r > f.max_finite) r = f.has_infinity ? std::numeric_limits<double>::infinity() : f.max_finite;
  return std::copysign(r, x);
}

std::uint32_t encode(DType t, double x) {
  const Format& f = format_of(t);
  const int width = f.exponent_bits + f.mantissa_bits;
  const std::uint32_t exp_all_ones = (1u << f.exponent_bits) - 1u;
  const std::uint32_t mant_all_ones = (1u << f.mantissa_bits) - 1u;
  const double r = round_to(t, x);
  const std::uint32_t sign = std::signbit(r) ? (1u << width) : 0u;
  if (std::isnan(r)) {
    // Canonical quiet NaN: all-ones exponent, top mantissa bit (E4M3: all-ones mantissa too).
    const std::uint32_t mant = f.has_infinity ? (1u << (f.mantissa_bits - 1)) : mant_all_ones;
    return (exp_all_ones << f.mantissa_bits) | mant;
  }
  if (std::isinf(r)) return sign | (exp_all_ones << f.mantissa_bits);
  if (r == 0.0) return sign;
  const double a = std::fabs(r);
  const int emin = 1 - f.bias;
  const int e = std::ilogb(a);
  if (e < emin) {  // subnormal: exponent field 0, a = mant * 2^(emin - m)
    const auto mant = static_cast<std::uint32_t>(std::ldexp(a, f.mantissa_bits - emin));
    return sign | mant;
  }
  const auto biased = static_cast<std::uint32_t>(e + f.bias);
  const auto mant =
      static_cast<std::uint32_t>(std::ldexp(a, f.mantissa_bits - e)) - (1u << f.mantissa_bits);
  return sign | (biased << f.mantissa_bits) | mant;
}

double decode(DType t, std::uint32_t bits) {
  const Format& f = format_of(t);
  const int width = f.exponent_bits + f.mantissa_bits;
  const std::uint32_t exp_all_ones = (1u << f.exponent_bits) - 1u;
  const std::uint32_t mant_all_ones = (1u << f.mantissa_bits) - 1u;
  const bool negative = ((bits >> width) & 1u) != 0;
  const std::uint32_t biased = (bits >> f.mantissa_bits) & exp_all_ones;
  const std::uint32_t mant = bits & mant_all_ones;
  double v = 0;
  if (biased == exp_all_ones && f.has_infinity) {
    v = mant == 0 ? std::numeric_limits<double>::infinity()
                  : std::numeric_limits<double>::quiet_NaN();
  } else if (biased == exp_all_ones && mant == mant_all_ones) {  // E4M3's only NaN
    v = std::numeric_limits<double>::quiet_NaN();
  } else if (biased == 0) {
    v = std::ldexp(static_cast<double>(mant), 1 - f.bias - f.mantissa_bits);
  } else {
    v = std::ldexp(static_cast<double>(mant | (1u << f.mantissa_bits)),
                   static_cast<int>(biased) - f.bias - f.mantissa_bits);
  }
  return negative ? -v : v;
}

double ulp(DType t, double x) {
  const Format& f = format_of(t);
  const double a = std::fabs(x);
  if (a == 0.0 || !std::isfinite(a)) return f.min_subnormal;
  const int e = binade_exponent(f, std::min(a, f.max_finite));
  return std::ldexp(1.0, e - f.mantissa_bits);
}

double unit_roundoff(DType t) {
  return std::ldexp(1.0, -(format_of(t).mantissa_bits + 1));
}

std::vector<std::uint8_t> encode_buffer(DType t, std::span<const double> values) {
  const auto bytes = static_cast<std::size_t>(format_of(t).bytes);
  std::vector<std::uint8_t> out(values.size() * bytes);
  for (std::size_t i = 0; i < values.size(); ++i) {
    const std::uint32_t bits = encode(t, values[i]);
    for (std::size_t b = 0; b < bytes; ++b)
      out[i * bytes + b] = static_cast<std::uint8_t>(bits >> (8 * b));
  }
  return out;
}

std::vector<double> decode_buffer(DType t, std::span<const std::uint8_t> bytes) {
  const auto n = static_cast<std::size_t>(format_of(t).bytes);
  if (bytes.size() % n != 0)
    throw std::invalid_argument("buffer size is not a whole number of elements");
  std::vector<double> out(bytes.size() / n);
  for (std::size_t i = 0; i < out.size(); ++i) {
    std::uint32_t bits = 0;
    for (std::size_t b = 0; b < n; ++b)
      bits |= static_cast<std::uint32_t>(bytes[i * n + b]) << (8 * b);
    out[i] = decode(t, bits);
  }
  return out;
}

}  // namespace conformance
