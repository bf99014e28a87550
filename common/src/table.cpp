#include "gpulab/table.hpp"

#include <algorithm>
#include <stdexcept>

namespace gpulab {
namespace {

// Display width in code points, so "≈" or "µs" in a cell does not break alignment.
std::size_t display_width(const std::string& s) {
  return static_cast<std::size_t>(
      std::count_if(s.begin(), s.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

void rtrim(std::string& s) {
  while (!s.empty() && s.back() == ' ') s.pop_back();
}

}  // namespace

Table& Table::column(std::string header, Align align, int min_width) {
  columns_.push_back({std::move(header), align, min_width});
  return *this;
}

Table& Table::row(std::vector<std::string> cells) {
  if (cells.size() > columns_.size()) throw std::logic_error("Table::row: more cells than columns");
  cells.resize(columns_.size());
  rows_.push_back(std::move(cells));
  return *this;
}

Table& Table::rule() {
  rows_.emplace_back();
  return *this;
}

std::string Table::render() const {
  std::vector<std::size_t> width(columns_.size());
  for (std::size_t c = 0; c < columns_.size(); ++c) {
    width[c] = std::max(display_width(columns_[c].header), static_cast<std::size_t>(columns_[c].min_width));
    for (const auto& r : rows_)
      if (!r.empty()) width[c] = std::max(width[c], display_width(r[c]));
  }
  auto line = [&](const std::vector<std::string>& cells) {
    std::string out;
    for (std::size_t c = 0; c < columns_.size(); ++c) {
      if (c > 0) out += gap_;
      const std::string pad(width[c] - display_width(cells[c]), ' ');
      out += columns_[c].align == Align::kLeft ? cells[c] + pad : pad + cells[c];
    }
    rtrim(out);
    return out + '\n';
  };
  std::vector<std::string> headers;
  for (const auto& col : columns_) headers.push_back(col.header);
  std::size_t total = 0;
  for (std::size_t c = 0; c < columns_.size(); ++c) total += width[c] + (c > 0 ? gap_.size() : 0);

  std::string out = line(headers);
  for (const auto& r : rows_) out += r.empty() ? std::string(total, '-') + '\n' : line(r);
  return out;
}

}  // namespace gpulab
