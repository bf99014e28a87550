#pragma once
// A UTF-8 byte-order mark at the start of a CSV file (Excel writes one) is not data: the
// trace parsers drop it from their first line instead of reporting "unknown header".
#include <string_view>

namespace gpulab {

inline constexpr std::string_view kUtf8Bom = "\xEF\xBB\xBF";

inline std::string_view without_utf8_bom(std::string_view line) {
  return line.substr(0, kUtf8Bom.size()) == kUtf8Bom ? line.substr(kUtf8Bom.size()) : line;
}

}  // namespace gpulab
