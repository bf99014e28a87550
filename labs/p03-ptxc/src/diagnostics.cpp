#include "ptxc/diagnostics.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace ptxc {

Diagnostics::Diagnostics(std::string file_name, std::string_view source)
    : file_(std::move(file_name)) {
  std::size_t start = 0;
  while (start <= source.size()) {
    const auto end = source.find('\n', start);
    if (end == std::string_view::npos) {
      lines_.emplace_back(source.substr(start));
      break;
    }
    lines_.emplace_back(source.substr(start, end - start));
    start = end + 1;
  }
}

void Diagnostics::error(SourceLoc loc, std::string message) {
  if (errors_.size() < kMaxErrors) errors_.push_back({loc, std::move(message)});
}

std::string Diagnostics::render() const {
  // Source order, as a reader scans the file (stages report in their own order).
  std::vector<Diagnostic> sorted = errors_;
  std::stable_sort(sorted.begin(), sorted.end(), [](const Diagnostic& a, const Diagnostic& b) {
    return a.loc.line != b.loc.line ? a.loc.line < b.loc.line : a.loc.col < b.loc.col;
  });
  std::string out;
  for (const auto& d : sorted) {
    out += fmt::format("{}:{}:{}: error: {}\n", file_, d.loc.line, d.loc.col, d.message);
    const auto idx = static_cast<std::size_t>(d.loc.line - 1);
    if (d.loc.line >= 1 && idx < lines_.size()) {
      // Tabs stay tabs under the caret so it lines up in any terminal.
      const std::string& text = lines_[idx];
      std::string pad;
      for (std::size_t c = 0; c + 1 < static_cast<std::size_t>(d.loc.col) && c < text.size(); ++c)
        pad += text[c] == '\t' ? '\t' : ' ';
      out += fmt::format("  {}\n  {}^\n", text, pad);
    }
  }
  return out;
}

}  // namespace ptxc
