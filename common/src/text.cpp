#include "gpulab/text.hpp"

#include <cctype>

namespace gpulab {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front())) != 0) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back())) != 0) s.remove_suffix(1);
  return s;
}

std::vector<std::string_view> split_fields(std::string_view line, char sep) {
  std::vector<std::string_view> fields;
  std::size_t start = 0;
  for (;;) {
    const std::size_t at = line.find(sep, start);
    fields.push_back(trim(line.substr(start, at == std::string_view::npos ? at : at - start)));
    if (at == std::string_view::npos) return fields;
    start = at + 1;
  }
}

}  // namespace gpulab
