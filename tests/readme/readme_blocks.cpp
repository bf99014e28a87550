#include "readme_blocks.hpp"

#include <fmt/core.h>

#include <regex>
#include <sstream>
#include <stdexcept>

namespace readme {
namespace {

const std::string kMarker = "<!-- gpulab-check:";

std::string rtrim(std::string s) {
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.pop_back();
  return s;
}

std::vector<std::string> trimmed(const std::vector<std::string>& lines) {
  std::vector<std::string> out;
  for (const auto& l : lines) out.push_back(rtrim(l));
  while (!out.empty() && out.back().empty()) out.pop_back();
  return out;
}

std::vector<std::string> words(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

}  // namespace

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::string cur;
  for (char c : text) {
    if (c == '\n') {
      lines.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty()) lines.push_back(cur);
  return lines;
}

std::vector<Block> find_blocks(const std::vector<std::string>& lines) {
  std::vector<Block> blocks;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const auto pos = lines[i].find(kMarker);
    if (pos == std::string::npos) continue;
    const auto where = [&](std::size_t line) { return fmt::format("README:{}: ", line + 1); };
    const auto close = lines[i].find("-->", pos);
    if (close == std::string::npos) throw std::runtime_error(where(i) + "marker not closed with -->");
    Block b;
    bool have_mode = false;
    for (const auto& w : words(lines[i].substr(pos + kMarker.size(), close - pos - kMarker.size()))) {
      if (w == "exact" || w == "shape") {
        b.mode = w == "exact" ? Mode::kExact : Mode::kShape;
        have_mode = true;
      } else if (w.rfind("exit=", 0) == 0) {
        b.expected_exit = std::stoi(w.substr(5));
      } else {
        throw std::runtime_error(where(i) + "unknown marker word '" + w + "' (use exact|shape, exit=N)");
      }
    }
    if (!have_mode) throw std::runtime_error(where(i) + "marker needs a mode: exact or shape");
    if (i + 2 >= lines.size() || lines[i + 1].rfind("```", 0) != 0)
      throw std::runtime_error(where(i) + "marker must be followed by a ``` fence");
    if (lines[i + 2].rfind("$ ", 0) != 0)
      throw std::runtime_error(where(i + 2) + "first line of a checked block must be '$ <command>'");
    b.command = lines[i + 2].substr(2);
    b.first_line = i + 2;
    std::size_t j = i + 3;
    for (; j < lines.size() && lines[j].rfind("```", 0) != 0; ++j) b.expected.push_back(lines[j]);
    if (j == lines.size()) throw std::runtime_error(where(i + 1) + "code fence never closed");
    b.end_line = j;
    blocks.push_back(std::move(b));
    i = j;
  }
  return blocks;
}

std::string shape_of(const std::string& line) {
  // A number: optional sign, digits with ',' or '_' groups, optional fraction and exponent.
  static const std::regex number(R"([-+]?[0-9][0-9,_]*(\.[0-9]+)?([eE][-+]?[0-9]+)?)");
  return std::regex_replace(line, number, "#");
}

std::string compare(const Block& block, const std::vector<std::string>& actual_raw) {
  const auto expected = trimmed(block.expected);
  const auto actual = trimmed(actual_raw);
  const std::size_t n = std::max(expected.size(), actual.size());
  for (std::size_t i = 0; i < n; ++i) {
    if (i >= expected.size())
      return fmt::format("output line {} is extra: '{}'", i + 1, actual[i]);
    if (i >= actual.size())
      return fmt::format("output ends before line {}: expected '{}'", i + 1, expected[i]);
    const bool same = block.mode == Mode::kExact
                          ? expected[i] == actual[i]
                          : words(shape_of(expected[i])) == words(shape_of(actual[i]));
    if (!same)
      return fmt::format("line {} differs:\n  README:  '{}'\n  program: '{}'", i + 1, expected[i], actual[i]);
  }
  return {};
}

}  // namespace readme
