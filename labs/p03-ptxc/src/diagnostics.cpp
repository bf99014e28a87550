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
      // A long line (a generated 280 KB expression) is shown as a window around
      // the column, so one error stays a few lines of text, not the whole file.
      const std::string& line = lines_[idx];
      const std::size_t col = std::min(static_cast<std::size_t>(std::max(d.loc.col, 1)) - 1, line.size());
      const std::size_t from = line.size() <= kMaxShownColumns ? 0 : col - std::min(col, kMaxShownColumns / 2);
      const std::size_t to = std::min(line.size(), from + kMaxShownColumns);
      const std::string before = from > 0 ? "..." : "";
      const std::string after = to < line.size() ? "..." : "";
      // Tabs stay tabs under the caret so it lines up in any terminal.
      std::string pad(before.size(), ' ');
      for (std::size_t c = from; c < col && c < to; ++c) pad += line[c] == '\t' ? '\t' : ' ';
      out += fmt::format("  {}{}{}\n  {}^\n", before, line.substr(from, to - from), after, pad);
    }
  }
  return out;
}

}  // namespace ptxc
