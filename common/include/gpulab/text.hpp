// Small text helpers every trace, config and source parser needs: trimming,
// splitting a CSV-style line, parsing a whole field as a number.
#pragma once

#include <charconv>
#include <string_view>
#include <system_error>
#include <vector>

namespace gpulab {

// Strips spaces, tabs, CR and LF (any isspace character) from both ends.
std::string_view trim(std::string_view s);

// Splits on `sep` and trims each field. An empty line gives one empty field,
// "a,,b" gives {"a", "", "b"}; callers check the field count.
std::vector<std::string_view> split_fields(std::string_view line, char sep = ',');

// Parses all of `s` as a number (integral or floating point). "12x", "" and
// out-of-range values fail; no locale, no leading '+' or whitespace.
template <class T>
bool parse_number(std::string_view s, T& out) {
  if (s.empty()) return false;
  const char* end = s.data() + s.size();
  const auto [ptr, ec] = std::from_chars(s.data(), end, out);
  return ec == std::errc{} && ptr == end;
}

}  // namespace gpulab
