#include "simt/assembler.hpp"

#include <fmt/core.h>

#include <cctype>
#include <charconv>
#include <map>
#include <sstream>

#include "gpulab/errors.hpp"
#include "gpulab/file.hpp"
#include "gpulab/text.hpp"
#include "decode.hpp"
#include "opcode_table.hpp"

namespace simt {

AssemblyError::AssemblyError(std::string file, int line, const std::string& message)
    : std::runtime_error(fmt::format("{}:{}: error: {}", file, line, message)), line_(line) {}

namespace {

using gpulab::trim;

bool is_identifier(std::string_view s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  return true;
}

std::string upper(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

// One source line after the label and comment are stripped.
struct SourceLine {
  int line;
  std::string text;  // the instruction as written, for --trace
  std::string mnemonic;
  std::vector<std::string> operands;
};

class Assembler {
 public:
  Assembler(std::string_view source, std::string file) : source_(source), file_(std::move(file)) {}

  Program run() {
    collect_lines_and_labels();
    Program program{file_, {}, nullptr};
    for (const auto& src : lines_) program.code.push_back(encode(src));
    program.decoded = std::make_shared<const DecodedCode>(DecodedCode{decode(program)});
    return program;
  }

 private:
  [[noreturn]] void fail(int line, const std::string& message) const {
    throw AssemblyError(file_, line, message);
  }

  // Pass 1: split lines, record labels (a label names the next instruction).
  void collect_lines_and_labels() {
    std::istringstream in{std::string(source_)};
    std::string raw;
    int line_no = 0;
    while (std::getline(in, raw)) {
      ++line_no;
      std::string_view text = raw;
      if (const auto semi = text.find(';'); semi != std::string_view::npos) text = text.substr(0, semi);
      text = trim(text);
      if (const auto colon = text.find(':'); colon != std::string_view::npos) {
        const auto label = trim(text.substr(0, colon));
        if (!is_identifier(label)) fail(line_no, fmt::format("bad label '{}'", label));
        if (!labels_.emplace(std::string(label), std::make_pair(lines_.size(), line_no)).second)
          fail(line_no, fmt::format("label '{}' defined twice (first on line {})", label, labels_.at(std::string(label)).second));
        text = trim(text.substr(colon + 1));
      }
      if (text.empty()) continue;
      SourceLine src{line_no, std::string(text), {}, {}};
      const auto space = text.find_first_of(" \t");
      src.mnemonic = upper(text.substr(0, space));
      if (space != std::string_view::npos) {
        std::string_view rest = trim(text.substr(space));
        while (true) {
          const auto comma = rest.find(',');
          const auto operand = trim(rest.substr(0, comma));
          if (operand.empty()) fail(line_no, fmt::format("empty operand in '{}'", text));
          src.operands.emplace_back(operand);
          if (comma == std::string_view::npos) break;
          rest = rest.substr(comma + 1);
        }
      }
      lines_.push_back(std::move(src));
    }
  }

  std::uint8_t parse_register(const SourceLine& src, const std::string& s) const {
    if (s.size() >= 2 && (s[0] == 'r' || s[0] == 'R')) {
      int n = -1;
      const auto [end, ec] = std::from_chars(s.data() + 1, s.data() + s.size(), n);
      if (ec == std::errc() && end == s.data() + s.size() && n >= 0 && n < kNumRegisters)
        return static_cast<std::uint8_t>(n);
    }
    fail(src.line, fmt::format("bad register '{}' (registers are r0-r{})", s, kNumRegisters - 1));
  }

  static bool looks_like_immediate(const std::string& s) {
    return !s.empty() && (std::isdigit(static_cast<unsigned char>(s[0])) || s[0] == '-' || s[0] == '+');
  }

  std::int64_t parse_immediate(const SourceLine& src, const std::string& s) const {
    std::int64_t v = 0;
    const char* begin = s.data() + (s[0] == '+' ? 1 : 0);
    const auto [end, ec] = std::from_chars(begin, s.data() + s.size(), v);
    if (ec == std::errc::result_out_of_range) fail(src.line, fmt::format("immediate '{}' does not fit in 64 bits", s));
    if (ec != std::errc() || end != s.data() + s.size())
      fail(src.line, fmt::format("bad immediate '{}' (decimal integers only)", s));
    return v;
  }

  std::uint32_t resolve_label(const SourceLine& src, const std::string& name) const {
    const auto it = labels_.find(name);
    if (it == labels_.end()) fail(src.line, fmt::format("undefined label '{}'", name));
    return static_cast<std::uint32_t>(it->second.first);
  }

  Instruction encode(const SourceLine& src) const {
    const auto info = find_opcode(src.mnemonic);
    if (!info) fail(src.line, fmt::format("unknown mnemonic '{}'", src.mnemonic));
    if (src.operands.size() != info->signature.size())
      fail(src.line, fmt::format("{} expects {} operand{} ({}), got {}", info->name, info->signature.size(),
                                 info->signature.size() == 1 ? "" : "s", info->usage, src.operands.size()));
    Instruction ins;
    ins.op = info->op;
    ins.line = src.line;
    ins.text = src.text;
    // Register operands fill rd, ra, rb, rp in order (BRZ's and ST's first register is a source).
    std::uint8_t* reg_slots[] = {&ins.rd, &ins.ra, &ins.rb, &ins.rp};
    if (info->op == Opcode::kBrz || info->op == Opcode::kSt) reg_slots[0] = &ins.ra, reg_slots[1] = &ins.rb;
    std::size_t next_reg = 0;
    std::vector<std::uint32_t> label_values;
    for (std::size_t i = 0; i < info->signature.size(); ++i) {
      const auto& operand = src.operands[i];
      switch (info->signature[i]) {
        case 'R':
          if (looks_like_immediate(operand))
            fail(src.line, fmt::format("{} operand {} must be a register, got '{}'", info->name, i + 1, operand));
          *reg_slots[next_reg++] = parse_register(src, operand);
          break;
        case 'B':
          if (looks_like_immediate(operand)) {
            ins.b_is_imm = true;
            ins.imm = parse_immediate(src, operand);
          } else {
            *reg_slots[next_reg++] = parse_register(src, operand);
          }
          break;
        case 'I':
          if (!looks_like_immediate(operand))
            fail(src.line, fmt::format("{} operand {} must be an immediate, got '{}'", info->name, i + 1, operand));
          ins.imm = parse_immediate(src, operand);
          break;
        case 'L':
          if (!is_identifier(operand)) fail(src.line, fmt::format("bad label '{}'", operand));
          label_values.push_back(resolve_label(src, operand));
          break;
      }
    }
    if (!label_values.empty()) ins.target = label_values[0];
    if (info->op == Opcode::kBrz) {
      ins.join = label_values[1];
      const auto join_op = ins.join < lines_.size() ? find_opcode(lines_[ins.join].mnemonic) : std::nullopt;
      if (!join_op || join_op->op != Opcode::kReconv)
        fail(src.line, fmt::format("BRZ join '{}' must label a RECONV instruction", src.operands[2]));
    }
    return ins;
  }

  std::string_view source_;
  std::string file_;
  std::vector<SourceLine> lines_;
  std::map<std::string, std::pair<std::size_t, int>> labels_;  // name -> (instruction index, line)
};

}  // namespace

Program assemble(std::string_view source, std::string file_name) {
  return Assembler(source, std::move(file_name)).run();
}

Program assemble_file(const std::string& path) {
  return assemble(gpulab::read_input_file(path, kMaxSourceBytes), path);
}

}  // namespace simt
