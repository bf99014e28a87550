#include "ptx_dissect/ptx_text.hpp"

#include <cctype>

#include "gpulab/text.hpp"

namespace ptx_dissect {

namespace {

using gpulab::trim;

std::vector<std::string_view> lines_of(std::string_view text) {
  std::vector<std::string_view> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    const auto end = text.find('\n', start);
    out.push_back(
        text.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start));
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  return out;
}

}  // namespace

PtxLine classify_line(std::string_view raw, int number) {
  PtxLine line;
  line.number = number;
  if (const auto c = raw.find("//"); c != std::string_view::npos) raw = raw.substr(0, c);
  std::string_view s = trim(raw);
  if (!s.empty() && s.back() == ';') s = trim(s.substr(0, s.size() - 1));
  line.text = std::string(s);
  if (s.empty() || s[0] == '.' || s.back() == ':' || s[0] == '{' || s[0] == '}' || s[0] == ')')
    return line;
  if (s[0] == '@') {
    const auto sp = s.find_first_of(" \t");
    line.guard = std::string(s.substr(0, sp));
    s = sp == std::string_view::npos ? std::string_view{} : trim(s.substr(sp));
  }
  const auto sp = s.find_first_of(" \t");
  line.opcode = std::string(s.substr(0, sp));
  return line;
}

std::optional<std::vector<PtxLine>> entry_body(std::string_view ptx, std::string_view name) {
  const auto lines = lines_of(ptx);
  std::vector<PtxLine> body;
  bool in_entry = false;
  bool in_body = false;
  for (std::size_t k = 0; k < lines.size(); ++k) {
    const std::string_view s = trim(lines[k]);
    if (!in_entry) {
      const auto pos = s.find(".entry ");
      if (pos == std::string_view::npos) continue;
      std::string_view rest = trim(s.substr(pos + 7));
      rest = rest.substr(0, rest.find('('));
      in_entry = trim(rest) == name;
      continue;
    }
    if (!in_body) {
      in_body = s.rfind('{', 0) == 0;
      continue;
    }
    if (s.rfind('}', 0) == 0) return body;
    PtxLine line = classify_line(lines[k], static_cast<int>(k + 1));
    if (!line.text.empty()) body.push_back(std::move(line));
  }
  return in_body ? std::optional<std::vector<PtxLine>>(body) : std::nullopt;
}

std::optional<std::vector<std::string>> entry_params(std::string_view ptx,
                                                     std::string_view name) {
  std::vector<std::string> params;
  bool in_entry = false;
  for (const auto raw : lines_of(ptx)) {
    std::string_view s = trim(raw);
    if (!in_entry) {
      const auto pos = s.find(".entry ");
      if (pos == std::string_view::npos || s.rfind("//", 0) == 0) continue;
      std::string_view rest = trim(s.substr(pos + 7));
      if (trim(rest.substr(0, rest.find('('))) != name) continue;
      in_entry = true;
      const auto open = rest.find('(');
      if (open == std::string_view::npos) continue;
      s = trim(rest.substr(open + 1));  // a declaration on the .entry line itself
    }
    const bool closes = s.find(')') != std::string_view::npos;
    s = trim(s.substr(0, s.find(')')));
    if (!s.empty() && s.back() == ',') s = trim(s.substr(0, s.size() - 1));
    if (!s.empty()) params.emplace_back(s);
    if (closes) return params;
  }
  return std::nullopt;
}

std::string header_directive(std::string_view ptx, std::string_view directive) {
  for (const auto raw : lines_of(ptx)) {
    const std::string_view s = trim(raw);
    if (s.rfind(directive, 0) != 0 || s.size() == directive.size()) continue;
    if (s[directive.size()] != ' ' && s[directive.size()] != '\t') continue;
    return std::string(trim(s.substr(directive.size())));
  }
  return {};
}

std::vector<std::string> entry_names(std::string_view ptx) {
  std::vector<std::string> names;
  for (const auto raw : lines_of(ptx)) {
    const std::string_view s = trim(raw);
    const auto pos = s.find(".entry ");
    if (pos == std::string_view::npos || s.rfind("//", 0) == 0) continue;
    std::string_view rest = trim(s.substr(pos + 7));
    names.emplace_back(trim(rest.substr(0, rest.find('('))));
  }
  return names;
}

}  // namespace ptx_dissect
