// Aligned text tables for the labs' human output. Widths grow to fit the
// widest cell; a column's minimum width lets a lab reproduce a curriculum
// table byte for byte.
#pragma once

#include <string>
#include <vector>

namespace gpulab {

class Table {
 public:
  enum class Align { kLeft, kRight };

  // `gap` is printed between columns.
  explicit Table(std::string gap = "  ") : gap_(std::move(gap)) {}

  Table& column(std::string header, Align align = Align::kRight, int min_width = 0);
  // Cells are already formatted (fmt::format); fewer cells than columns pad with "".
  Table& row(std::vector<std::string> cells);
  // A full-width horizontal rule between rows.
  Table& rule();

  // Every line ends with '\n'; trailing blanks are trimmed.
  [[nodiscard]] std::string render() const;
  [[nodiscard]] std::size_t rows() const { return rows_.size(); }

 private:
  struct Column {
    std::string header;
    Align align;
    int min_width;
  };
  std::string gap_;
  std::vector<Column> columns_;
  std::vector<std::vector<std::string>> rows_;  // an empty row vector is a rule
};

}  // namespace gpulab
