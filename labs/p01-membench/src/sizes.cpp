#include "membench/sizes.hpp"

#include <fmt/core.h>

#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>

namespace membench {

gpulab::Expected<std::size_t> parse_size(std::string_view text) {
  const auto bad = [&](std::string_view why) {
    return gpulab::Error{
        fmt::format("'{}' is not a size ({}; e.g. 4096, 32K, 256MiB, 1G)", text, why)};
  };
  std::size_t value = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec == std::errc::result_out_of_range) return bad("too large");
  if (ec != std::errc{} || ptr == text.data()) return bad("it must start with digits");
  std::string unit;
  for (const char* p = ptr; p != end; ++p)
    unit += static_cast<char>(std::tolower(static_cast<unsigned char>(*p)));
  std::size_t mult = 1;
  if (unit.empty() || unit == "b")
    mult = 1;
  else if (unit == "k" || unit == "kb" || unit == "kib")
    mult = std::size_t{1} << 10;
  else if (unit == "m" || unit == "mb" || unit == "mib")
    mult = std::size_t{1} << 20;
  else if (unit == "g" || unit == "gb" || unit == "gib")
    mult = std::size_t{1} << 30;
  else
    return bad(fmt::format("unknown unit '{}'", unit));
  if (value > std::numeric_limits<std::size_t>::max() / mult) return bad("too large");
  if (value == 0) return bad("it must be positive");
  return value * mult;
}

std::string format_size(std::size_t bytes) {
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  auto v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024.0 && u < 4) {
    v /= 1024.0;
    ++u;
  }
  if (v == std::floor(v)) return fmt::format("{:.0f} {}", v, kUnits[u]);
  return fmt::format("{:.1f} {}", v, kUnits[u]);
}

std::vector<std::size_t> sweep_sizes(std::size_t min, std::size_t max, int steps_per_doubling) {
  std::vector<std::size_t> sizes;
  if (min == 0 || max < min || steps_per_doubling < 1) return sizes;
  const double factor = std::exp2(1.0 / steps_per_doubling);
  for (int i = 0;; ++i) {
    const double exact = static_cast<double>(min) * std::pow(factor, i);
    if (exact > static_cast<double>(max) * (1.0 + 1e-9)) break;
    auto bytes = static_cast<std::size_t>(std::llround(exact / kCacheLine)) * kCacheLine;
    if (bytes < kCacheLine) bytes = kCacheLine;
    if (sizes.empty() || bytes > sizes.back()) sizes.push_back(bytes);
  }
  return sizes;
}

}  // namespace membench
