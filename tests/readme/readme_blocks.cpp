#include "readme_blocks.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
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

bool is_digit(char c) {
  return std::isdigit(static_cast<unsigned char>(c)) != 0;
}
bool is_alnum(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0;
}

// One piece of a word: text, or a number as printed.
struct Piece {
  bool number = false;
  std::string text;
};

// Where a number starts: a digit, or a sign right before a digit that does not follow a letter
// or digit ("-3", "(+5" yes; "2^32-1", "readme-30319" no: there '-' is text).
bool number_starts(const std::string& s, std::size_t i) {
  if (is_digit(s[i])) return true;
  if ((s[i] == '-' || s[i] == '+') && i + 1 < s.size() && is_digit(s[i + 1]))
    return i == 0 || !(is_alnum(s[i - 1]) || s[i - 1] == '.');
  return false;
}

// Digits with ',' or '_' groups ("1,572,864"), an optional fraction and exponent.
std::size_t number_end(const std::string& s, std::size_t i) {
  if (s[i] == '-' || s[i] == '+') ++i;
  const auto digits = [&] {
    while (i < s.size() && is_digit(s[i])) ++i;
  };
  digits();
  while (i + 1 < s.size() && (s[i] == ',' || s[i] == '_') && is_digit(s[i + 1])) {
    ++i;
    digits();
  }
  if (i + 1 < s.size() && s[i] == '.' && is_digit(s[i + 1])) {
    ++i;
    digits();
  }
  if (i + 1 < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    std::size_t j = i + 1;
    if (j < s.size() && (s[j] == '-' || s[j] == '+')) ++j;
    if (j < s.size() && is_digit(s[j])) {
      i = j;
      digits();
    }
  }
  return i;
}

std::vector<Piece> pieces(const std::string& word) {
  std::vector<Piece> out;
  for (std::size_t i = 0; i < word.size();) {
    if (number_starts(word, i)) {
      const std::size_t end = number_end(word, i);
      out.push_back({true, word.substr(i, end - i)});
      i = end;
    } else {
      if (out.empty() || out.back().number) out.push_back({false, ""});
      out.back().text += word[i++];
    }
  }
  return out;
}

bool is_decimal(const std::string& number) {
  return number.find_first_of(".eE") != std::string::npos;
}

double value_of(const std::string& number) {
  std::string plain;
  for (char c : number)
    if (c != ',' && c != '_') plain += c;
  return std::strtod(plain.c_str(), nullptr);
}

// One unit in the last printed digit: 0.01 for "3.29", 1 for "61547", 1e-15 for "1.0e-13".
double last_digit_unit(const std::string& number) {
  const auto e = number.find_first_of("eE");
  const std::string mantissa = number.substr(0, e);
  const auto dot = mantissa.find('.');
  const int frac = dot == std::string::npos ? 0 : static_cast<int>(mantissa.size() - dot - 1);
  const int exponent = e == std::string::npos ? 0 : std::atoi(number.c_str() + e + 1);
  return std::pow(10.0, exponent - frac);
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Empty when the README's number `want` accepts the program's `got`.
std::string compare_number(const Block& block, const std::string& want, const std::string& got,
                           bool measured) {
  if (measured) return {};  // vary=: present (the pieces line up) is all that is asked
  if (!is_decimal(want) || block.tol.kind == Tolerance::Kind::kNone) {
    if (want == got) return {};
    return is_decimal(want) ? "the block declares no tol=, so numbers compare exactly"
                            : "an integer is an identity and compares exactly (even under tol=)";
  }
  if (!is_decimal(got)) return "a measured decimal became an integer";
  if (block.tol.kind == Tolerance::Kind::kAny) return {};
  const double w = value_of(want), g = value_of(got);
  const double slack = std::max(block.tol.fraction * std::fabs(w), last_digit_unit(want));
  if (std::fabs(g - w) <= slack * (1 + 1e-9)) return {};
  return fmt::format("differs by more than tol={}%", block.tol.fraction * 100);
}

// Compares one line under `shape` rules; empty when it matches.
std::string compare_shape_line(const Block& block, const std::string& want,
                               const std::string& got) {
  const auto ww = words(want), gw = words(got);
  if (ww.size() != gw.size())
    return fmt::format("{} words where the README has {}", gw.size(), ww.size());
  std::string context;  // the README line so far, blanks removed, numbers as '#'
  for (std::size_t i = 0; i < ww.size(); ++i) {
    const auto wp = pieces(ww[i]), gp = pieces(gw[i]);
    const std::string word_diff =
        fmt::format("word {}: README '{}', program '{}'", i + 1, ww[i], gw[i]);
    if (wp.size() != gp.size()) return word_diff;
    for (std::size_t k = 0; k < wp.size(); ++k) {
      if (wp[k].number != gp[k].number) return word_diff;
      if (!wp[k].number) {
        if (wp[k].text != gp[k].text) return word_diff;
        context += wp[k].text;
        continue;
      }
      bool measured = false;
      for (const auto& v : block.vary) measured = measured || ends_with(context, v);
      const auto why = compare_number(block, wp[k].text, gp[k].text, measured);
      if (!why.empty()) return word_diff + ": " + why;
      context += '#';
    }
  }
  return {};
}

Tolerance parse_tol(const std::string& value, const std::string& where) {
  Tolerance t;
  if (value == "any") {
    t.kind = Tolerance::Kind::kAny;
    return t;
  }
  char* end = nullptr;
  const double pct = std::strtod(value.c_str(), &end);
  if (value.empty() || end == value.c_str() || std::string(end) != "%" || pct <= 0)
    throw std::runtime_error(where + "tol= takes a percentage (tol=25%) or 'any', not '" + value +
                             "'");
  t.kind = Tolerance::Kind::kRelative;
  t.fraction = pct / 100;
  return t;
}

// "1-2,4" -> {1, 2, 4}
std::vector<std::size_t> parse_lines(const std::string& value, const std::string& where) {
  std::vector<std::size_t> out;
  std::string item;
  std::istringstream in(value);
  while (std::getline(in, item, ',')) {
    const auto dash = item.find('-');
    try {
      std::size_t used = 0;
      const auto a = std::stoul(item.substr(0, dash), &used);
      const auto b = dash == std::string::npos ? a : std::stoul(item.substr(dash + 1));
      if (a == 0 || b < a || (dash == std::string::npos && used != item.size())) throw 0;
      for (auto l = a; l <= b; ++l) out.push_back(l);
    } catch (...) {
      throw std::runtime_error(where + "free-lines= takes line numbers and ranges (1-2,4), not '" +
                               value + "'");
    }
  }
  if (out.empty()) throw std::runtime_error(where + "free-lines= needs at least one line");
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
    const std::string where = fmt::format("README:{}: ", i + 1);
    const auto close = lines[i].find("-->", pos);
    if (close == std::string::npos) throw std::runtime_error(where + "marker not closed with -->");
    Block b;
    bool have_mode = false, have_tol = false;
    for (const auto& w :
         words(lines[i].substr(pos + kMarker.size(), close - pos - kMarker.size()))) {
      if (w == "exact" || w == "shape") {
        b.mode = w == "exact" ? Mode::kExact : Mode::kShape;
        have_mode = true;
      } else if (w.rfind("exit=", 0) == 0) {
        try {
          b.expected_exit = std::stoi(w.substr(5));
        } catch (const std::exception&) {
          throw std::runtime_error(where + "exit= takes a number, not '" + w.substr(5) + "'");
        }
      } else if (w.rfind("tol=", 0) == 0) {
        b.tol = parse_tol(w.substr(4), where);
        have_tol = true;
      } else if (w.rfind("vary=", 0) == 0) {
        std::string item;
        std::istringstream in(w.substr(5));
        while (std::getline(in, item, ','))
          if (!item.empty()) b.vary.push_back(item);
        if (b.vary.empty()) throw std::runtime_error(where + "vary= needs at least one context");
      } else if (w.rfind("free-lines=", 0) == 0) {
        b.free_lines = parse_lines(w.substr(11), where);
      } else {
        throw std::runtime_error(
            where + "unknown marker word '" + w +
            "' (use exact|shape, tol=P%|any, vary=CTX,..., free-lines=L,A-B, exit=N)");
      }
    }
    if (!have_mode) throw std::runtime_error(where + "marker needs a mode: exact or shape");
    if (b.mode == Mode::kExact && (have_tol || !b.vary.empty() || !b.free_lines.empty()))
      throw std::runtime_error(where + "tol=, vary= and free-lines= apply to shape blocks only");
    if (i + 2 >= lines.size() || lines[i + 1].rfind("```", 0) != 0)
      throw std::runtime_error(where + "marker must be followed by a ``` fence");
    if (lines[i + 2].rfind("$ ", 0) != 0)
      throw std::runtime_error(fmt::format("README:{}: ", i + 3) +
                               "first line of a checked block must be '$ <command>'");
    b.command = lines[i + 2].substr(2);
    b.first_line = i + 2;
    std::size_t j = i + 3;
    for (; j < lines.size() && lines[j].rfind("```", 0) != 0; ++j) b.expected.push_back(lines[j]);
    if (j == lines.size())
      throw std::runtime_error(fmt::format("README:{}: ", i + 2) + "code fence never closed");
    b.end_line = j;
    blocks.push_back(std::move(b));
    i = j;
  }
  return blocks;
}

std::string shape_of(const std::string& line) {
  std::string out;
  for (std::size_t i = 0; i < line.size();) {
    if (number_starts(line, i)) {
      out += '#';
      i = number_end(line, i);
    } else {
      out += line[i++];
    }
  }
  return out;
}

std::string compare(const Block& block, const std::vector<std::string>& actual_raw) {
  const auto expected = trimmed(block.expected);
  const auto actual = trimmed(actual_raw);
  const std::size_t n = std::max(expected.size(), actual.size());
  for (std::size_t i = 0; i < n; ++i) {
    if (i >= expected.size()) return fmt::format("output line {} is extra: '{}'", i + 1, actual[i]);
    if (i >= actual.size())
      return fmt::format("output ends before line {}: expected '{}'", i + 1, expected[i]);
    std::string why;
    if (block.mode == Mode::kExact) {
      if (expected[i] != actual[i]) why = "not the same text (exact block)";
    } else if (std::find(block.free_lines.begin(), block.free_lines.end(), i + 1) ==
               block.free_lines.end()) {
      why = compare_shape_line(block, expected[i], actual[i]);
    }
    if (!why.empty())
      return fmt::format("line {} differs ({}):\n  README:  '{}'\n  program: '{}'", i + 1, why,
                         expected[i], actual[i]);
  }
  return {};
}

std::vector<std::string> shown_output(const Block& block, const std::string& out,
                                      const std::string& err) {
  auto lines = split_lines(out);
  if (block.expected_exit != 0) {
    const auto err_lines = split_lines(err);
    lines.insert(lines.end(), err_lines.begin(), err_lines.end());
  }
  return lines;
}

}  // namespace readme
