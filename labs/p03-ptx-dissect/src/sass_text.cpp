#include "ptx_dissect/sass_text.hpp"

#include <fmt/format.h>

#include <cctype>
#include <stdexcept>

#include "gpulab/text.hpp"

namespace ptx_dissect {

namespace {

using gpulab::trim;

bool all_hex(std::string_view s) {
  if (s.empty()) return false;
  for (const char c : s)
    if (std::isxdigit(static_cast<unsigned char>(c)) == 0) return false;
  return true;
}

}  // namespace

std::string_view SassInstruction::base() const {
  const std::string_view op = opcode;
  return op.substr(0, op.find('.'));
}

std::vector<SassFunction> parse_sass_dump(std::string_view dump) {
  std::vector<SassFunction> out;
  std::string arch;
  int number = 0;
  std::size_t start = 0;
  while (start < dump.size()) {
    auto end = dump.find('\n', start);
    if (end == std::string_view::npos) end = dump.size();
    const std::string_view line = trim(dump.substr(start, end - start));
    start = end + 1;
    ++number;
    if (line.rfind("code for ", 0) == 0) {
      arch = std::string(trim(line.substr(9)));
      continue;
    }
    if (line.rfind("Function : ", 0) == 0) {
      out.push_back({std::string(trim(line.substr(11))), arch, {}});
      continue;
    }
    // "/*00c0*/ ..." is an instruction; "/* 0x000fca... */" is the encoding's second half.
    if (line.rfind("/*", 0) != 0) continue;
    const auto close = line.find("*/");
    if (close == std::string_view::npos || close - 2 > 16 || !all_hex(line.substr(2, close - 2)))
      continue;
    if (out.empty())
      throw std::runtime_error(
          fmt::format("line {}: SASS instruction before any 'Function :'", number));
    std::string_view text = line.substr(close + 2);
    text = trim(text.substr(0, text.find(';')));
    if (text.empty()) continue;
    SassInstruction insn;
    insn.address = std::stoull(std::string(line.substr(2, close - 2)), nullptr, 16);
    if (text[0] == '@') {
      const auto sp = text.find_first_of(" \t");
      insn.guard = std::string(text.substr(0, sp));
      text = sp == std::string_view::npos ? std::string_view{} : trim(text.substr(sp));
    }
    const auto sp = text.find_first_of(" \t");
    insn.opcode = std::string(text.substr(0, sp));
    if (sp != std::string_view::npos) insn.operands = std::string(trim(text.substr(sp)));
    out.back().code.push_back(std::move(insn));
  }
  return out;
}

const SassFunction* find_function(const std::vector<SassFunction>& fns, std::string_view name) {
  for (const auto& f : fns)
    if (f.name == name) return &f;
  return nullptr;
}

std::size_t count_base(const SassFunction& fn, std::string_view base) {
  std::size_t n = 0;
  for (const auto& i : fn.code) n += i.base() == base;
  return n;
}

bool is_padding_branch(const SassInstruction& insn) {
  if (insn.base() != "BRA" || !insn.guard.empty()) return false;
  const std::string_view ops = trim(insn.operands);
  if (ops.rfind("0x", 0) != 0 || ops.size() > 18 || !all_hex(ops.substr(2))) return false;
  const std::uint64_t target = std::stoull(std::string(ops.substr(2)), nullptr, 16);
  return target == insn.address;
}

}  // namespace ptx_dissect
