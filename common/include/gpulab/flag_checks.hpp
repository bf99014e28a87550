// One validator for every numeric flag (docs/conventions.md, "Numeric flags").
// CLI11 alone lets `--x nan` through CLI::Range (NaN compares false both ways)
// and reads `--seed -1` or `--seed 99999999999999999999` into a uint64_t as
// 2^64-1: a NaN penalty spins a scheduler forever, a negative seed silently
// equals another. These validators look at the text before CLI11 converts it:
//
//   app.add_option("--timeout", secs)->check(gpulab::finite_in(0.001, 3600));
//   app.add_option("--world", n)->check(gpulab::whole_in<std::uint32_t>(1, 64));
//
// A refusal is a parse error, exit 2: `prog: error: --timeout: must be a
// finite number in [0.001, 3600], got 'nan' (see --help)`.
#pragma once

#include <CLI/CLI.hpp>
#include <charconv>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <type_traits>

namespace gpulab {

// A finite decimal number in [lo, hi] ("1.5", "1e-3"; not "nan", "inf", "0x1p3").
CLI::Validator finite_in(double lo, double hi);

// The reason `text` is not a finite number in [lo, hi], or "" when it is one.
// For values that come from somewhere other than a flag (a config field).
std::string finite_number_problem(std::string_view text, double lo, double hi);

// A whole number of type T in [lo, hi], written in decimal digits (a leading
// '-' only for signed T): "-1" for an unsigned flag, "1e3", "12x" and values
// past T's range are refused instead of wrapping or saturating.
template <class T>
std::string whole_number_problem(std::string_view text, T lo, T hi) {
  static_assert(std::is_integral_v<T>);
  T v{};
  const auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  const bool parsed = !text.empty() && ec == std::errc{} && p == text.data() + text.size();
  if (parsed && v >= lo && v <= hi) return {};
  const std::string top = hi == std::numeric_limits<T>::max()
                              ? "2^" + std::to_string(std::numeric_limits<T>::digits) + "-1"
                              : std::to_string(hi);
  return "must be a whole number in [" + std::to_string(lo) + ", " + top + "], got '" +
         std::string(text) + "'";
}

// No help text of its own (the flag's help states the range), so adding the
// check to an existing flag leaves --help as it was.
template <class T>
CLI::Validator whole_in(T lo = std::numeric_limits<T>::min(), T hi = std::numeric_limits<T>::max()) {
  return CLI::Validator(
      [lo, hi](std::string& text) { return whole_number_problem<T>(text, lo, hi); }, "", "whole_in");
}

}  // namespace gpulab
