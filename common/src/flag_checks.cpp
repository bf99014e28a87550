#include "gpulab/flag_checks.hpp"

#include <fmt/format.h>

#include <cmath>

namespace gpulab {

std::string finite_number_problem(std::string_view text, double lo, double hi) {
  double v = 0;
  const auto [p, ec] =
      std::from_chars(text.data(), text.data() + text.size(), v, std::chars_format::general);
  const bool parsed = !text.empty() && ec == std::errc{} && p == text.data() + text.size();
  // from_chars reads "nan" and "inf"; isfinite refuses them.
  if (parsed && std::isfinite(v) && v >= lo && v <= hi) return {};
  return fmt::format("must be a finite number in [{}, {}], got '{}'", lo, hi, text);
}

CLI::Validator finite_in(double lo, double hi) {
  return CLI::Validator(
      [lo, hi](std::string& text) { return finite_number_problem(text, lo, hi); },
      "", "finite_in");
}

}  // namespace gpulab
