#include <fmt/format.h>

#include <bit>
#include <cctype>
#include <charconv>
#include <cstdlib>
#include <map>
#include <unordered_map>

#include "ptxc/ptx_module.hpp"

namespace ptxc::ptx {

const Entry* Module::find(std::string_view name) const {
  for (const auto& e : entries)
    if (e.name == name) return &e;
  return nullptr;
}

namespace {

struct Tok {
  std::string text;  // a word ("ld.global.f32", "%r4", "0f40000000") or one punctuation char
  int line = 0;
  bool word = false;
};

bool word_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '.' || c == '$' ||
         c == '%';
}

std::vector<Tok> tokenize(std::string_view s) {
  std::vector<Tok> out;
  int line = 1;
  std::size_t i = 0;
  while (i < s.size()) {
    const char c = s[i];
    if (c == '\n') {
      ++line;
      ++i;
    } else if (std::isspace(static_cast<unsigned char>(c)) != 0) {
      ++i;
    } else if (c == '/' && i + 1 < s.size() && s[i + 1] == '/') {
      while (i < s.size() && s[i] != '\n') ++i;
    } else if (c == '/' && i + 1 < s.size() && s[i + 1] == '*') {
      const int start = line;
      i += 2;
      while (i + 1 < s.size() && !(s[i] == '*' && s[i + 1] == '/')) line += s[i++] == '\n' ? 1 : 0;
      if (i + 1 >= s.size())
        throw ParseError(fmt::format("line {}: unterminated /* comment", start));
      i += 2;
    } else if (word_char(c)) {
      const auto start = i;
      while (i < s.size() && word_char(s[i])) ++i;
      out.push_back({std::string(s.substr(start, i - start)), line, true});
    } else if (std::string_view("(){}[],;:@!+-<>=").find(c) != std::string_view::npos) {
      out.push_back({std::string(1, c), line, false});
      ++i;
    } else {
      const auto u = static_cast<unsigned char>(c);
      throw ParseError(fmt::format(
          "line {}: unexpected character {}", line,
          (u >= 0x20 && u < 0x7f) ? fmt::format("'{}'", c) : fmt::format("0x{:02x}", u)));
    }
  }
  return out;
}

std::vector<std::string_view> split_dots(std::string_view s) {
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  for (;;) {
    const auto dot = s.find('.', start);
    parts.push_back(
        s.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start));
    if (dot == std::string_view::npos) return parts;
    start = dot + 1;
  }
}

bool parse_dtype(std::string_view s, DType& out) {
  static const std::map<std::string_view, DType> kTypes = {
      {"s32", DType::kS32}, {"u32", DType::kU32}, {"b32", DType::kB32}, {"s64", DType::kS64},
      {"u64", DType::kU64}, {"b64", DType::kB64}, {"f32", DType::kF32}, {"pred", DType::kPred}};
  const auto it = kTypes.find(s);
  if (it == kTypes.end()) return false;
  out = it->second;
  return true;
}

class Parser {
 public:
  explicit Parser(std::string_view text) : toks_(tokenize(text)) {}

  // module := (directive | entry)*
  Module module() {
    Module m;
    while (!at_end()) {
      const Tok& t = next();
      if (t.text == ".version") {
        m.version = expect_word("a version number").text;
      } else if (t.text == ".target") {
        m.target = expect_word("a target").text;
        while (peek_is(",")) {  // .target sm_80, texmode_independent
          next();
          expect_word("a target option");
        }
      } else if (t.text == ".address_size") {
        m.address_size = to_int(expect_word("64"));
        if (m.address_size != 64) fail(t, "only .address_size 64 is supported");
      } else if (t.text == ".visible" || t.text == ".weak") {
        continue;  // linkage of the .entry that follows
      } else if (t.text == ".entry") {
        m.entries.push_back(entry(t.line));
      } else {
        fail(t, fmt::format("unsupported module-level '{}' (the interpreter runs .entry kernels)",
                            t.text));
      }
    }
    if (m.version.empty()) throw ParseError("line 1: missing .version directive");
    if (m.target.empty()) throw ParseError("line 1: missing .target directive");
    if (m.address_size != 64) throw ParseError("line 1: missing .address_size 64 directive");
    return m;
  }

 private:
  // entry := NAME '(' [param (',' param)*] ')' '{' (reg_decl | label | instruction)* '}'
  Entry entry(int line) {
    Entry e;
    e.line = line;
    e.name = expect_word("the kernel name").text;
    expect("(");
    while (!peek_is(")")) {
      const Tok& p = expect_word(".param");
      if (p.text != ".param") fail(p, fmt::format("expected .param, found '{}'", p.text));
      ParamDecl decl;
      const Tok& type = expect_word("a parameter type");
      if (type.text.empty() || !parse_dtype(std::string_view(type.text).substr(1), decl.type) ||
          decl.type == DType::kPred)
        fail(type, fmt::format("unsupported parameter type '{}'", type.text));
      decl.name = expect_word("a parameter name").text;
      e.params.push_back(decl);
      if (!peek_is(",")) break;
      next();
    }
    expect(")");
    expect("{");
    std::map<std::string, int, std::less<>> labels;
    registers_.clear();
    e.registers.clear();
    while (!peek_is("}")) {
      if (at_end())
        throw ParseError(fmt::format("line {}: unterminated body of entry '{}'", line, e.name));
      const Tok& t = peek();
      if (t.text == ".reg") {
        next();
        reg_decl(e);
      } else if (t.word && pos_ + 1 < toks_.size() && toks_[pos_ + 1].text == ":") {
        next();
        next();
        if (!labels.emplace(t.text, static_cast<int>(e.body.size())).second)
          fail(t, fmt::format("label '{}' defined twice", t.text));
      } else {
        e.body.push_back(instruction(e));
      }
    }
    next();  // '}'
    for (std::size_t k = 0; k < e.body.size(); ++k) {
      for (auto& op : e.body[k].ops) {
        if (op.kind != Operand::Kind::kLabel) continue;
        const auto it = labels.find(label_names_[static_cast<std::size_t>(op.index)]);
        if (it == labels.end())
          throw ParseError(fmt::format("line {}: undefined label '{}'", e.body[k].line,
                                       label_names_[static_cast<std::size_t>(op.index)]));
        op.index = it->second;
      }
    }
    label_names_.clear();
    return e;
  }

  // reg_decl := '.reg' TYPE (NAME '<' COUNT '>' | NAME (',' NAME)*) ';'
  void reg_decl(Entry& e) {
    const Tok& type = expect_word("a register type");
    DType dt{};
    if (type.text.empty() || !parse_dtype(std::string_view(type.text).substr(1), dt))
      fail(type, fmt::format("unsupported register type '{}'", type.text));
    for (;;) {
      const Tok& name = expect_word("a register name");
      if (peek_is("<")) {
        next();
        const int count = to_int(expect_word("a register count"));
        expect(">");
        if (count < 0 || e.registers.size() + static_cast<std::size_t>(count) > kMaxRegisters)
          fail(name, fmt::format("too many registers (the interpreter allows {})", kMaxRegisters));
        for (int r = 0; r < count; ++r) add_register(e, fmt::format("{}{}", name.text, r), name);
      } else {
        if (e.registers.size() >= kMaxRegisters) fail(name, "too many registers");
        add_register(e, name.text, name);
      }
      if (!peek_is(",")) break;
      next();
    }
    expect(";");
  }

  void add_register(Entry& e, const std::string& name, const Tok& at) {
    if (!registers_.emplace(name, static_cast<int>(e.registers.size())).second)
      fail(at, fmt::format("register '{}' declared twice", name));
    e.registers.push_back(name);
  }

  // instruction := ['@' ['!'] PRED] OPCODE [operand (',' operand)*] ';'
  Instruction instruction(const Entry& e) {
    Instruction in;
    if (peek_is("@")) {
      next();
      if (peek_is("!")) {
        next();
        in.guard_negated = true;
      }
      in.guard = reg(expect_word("a predicate register"));
    }
    const Tok& opcode = expect_word("an instruction");
    in.line = opcode.line;
    in.opcode_text = opcode.text;
    decode(opcode, in);
    if (!peek_is(";")) {
      in.ops.push_back(operand(e));
      while (peek_is(",")) {
        next();
        in.ops.push_back(operand(e));
      }
    }
    expect(";");
    check_arity(opcode, in);
    return in;
  }

  // The opcode string, e.g. "ld.global.nc.f32", "setp.ge.s32", "fma.rn.f32".
  void decode(const Tok& t, Instruction& in) {
    const auto parts = split_dots(t.text);
    const std::string_view base = parts[0];
    const auto has = [&](std::string_view mod) {
      for (std::size_t k = 1; k < parts.size(); ++k)
        if (parts[k] == mod) return true;
      return false;
    };
    const auto unsupported = [&](std::string_view why) {
      fail(t, fmt::format("unsupported instruction '{}' ({})", t.text, why));
    };
    if (base == "bra") {
      in.op = Opcode::kBra;
      return;
    }
    if (base == "ret" || base == "exit") {
      in.op = Opcode::kRet;
      return;
    }
    if (parts.size() < 2 || !parse_dtype(parts.back(), in.type))
      unsupported("expected a type suffix such as .f32");
    // Every modifier between the base and the type must be one we implement.
    const auto allow = [&](std::initializer_list<std::string_view> ok) {
      for (std::size_t k = 1; k + 1 < parts.size(); ++k) {
        bool found = false;
        for (const auto m : ok) found = found || parts[k] == m;
        if (!found) unsupported(fmt::format("modifier .{}", parts[k]));
      }
    };
    const bool f32 = in.type == DType::kF32;
    if (base == "ld") {
      allow({"param", "global", "nc"});
      in.op = has("param") ? Opcode::kLdParam : has("global") ? Opcode::kLdGlobal : Opcode::kRet;
      if (in.op == Opcode::kRet) unsupported("only the .param and .global state spaces");
    } else if (base == "st") {
      allow({"global"});
      if (!has("global")) unsupported("only st.global");
      in.op = Opcode::kStGlobal;
    } else if (base == "cvta") {
      allow({"to", "global"});
      if (!has("to") || !has("global")) unsupported("only cvta.to.global");
      in.op = Opcode::kCvtaToGlobal;
    } else if (base == "mov") {
      allow({});
      in.op = Opcode::kMov;
    } else if (base == "cvt") {
      // cvt.s64.s32 d, a: the destination type comes first.
      if (parts.size() != 3 || !parse_dtype(parts[1], in.type) ||
          !parse_dtype(parts[2], in.src_type) || f32 || in.type == DType::kF32 ||
          in.src_type == DType::kF32)
        unsupported("only integer widening cvt");
      in.op = Opcode::kCvt;
    } else if (base == "add" || base == "sub" || base == "mul" || base == "div" || base == "fma" ||
               base == "sqrt") {
      if (f32) {
        allow({"rn"});
        if ((base == "div" || base == "fma" || base == "sqrt") && !has("rn"))
          unsupported("f32 div, fma and sqrt need .rn here (.approx/.full are not IEEE)");
      } else if (base == "mul") {
        allow({"lo", "wide"});
        if (!has("lo") && !has("wide")) unsupported("integer mul needs .lo or .wide");
      } else if (base == "add" || base == "sub") {
        allow({});
      } else {
        unsupported("integer form");
      }
      in.op = base == "add"    ? Opcode::kAdd
              : base == "sub"  ? Opcode::kSub
              : base == "div"  ? Opcode::kDiv
              : base == "fma"  ? Opcode::kFma
              : base == "sqrt" ? Opcode::kSqrt
              : has("wide")    ? Opcode::kMulWide
              : has("lo")      ? Opcode::kMulLo
                               : Opcode::kMul;
    } else if (base == "mad") {
      allow({"lo"});
      if (f32 || !has("lo")) unsupported("only integer mad.lo");
      in.op = Opcode::kMad;
    } else if (base == "neg" || base == "abs" || base == "min" || base == "max") {
      allow({});
      in.op = base == "neg"   ? Opcode::kNeg
              : base == "abs" ? Opcode::kAbs
              : base == "min" ? Opcode::kMin
                              : Opcode::kMax;
    } else if (base == "shl") {
      allow({});
      in.op = Opcode::kShl;
    } else if (base == "setp") {
      static const std::map<std::string_view, Cmp> kCmps = {{"eq", Cmp::kEq}, {"ne", Cmp::kNe},
                                                            {"lt", Cmp::kLt}, {"le", Cmp::kLe},
                                                            {"gt", Cmp::kGt}, {"ge", Cmp::kGe}};
      const auto it = parts.size() == 3 ? kCmps.find(parts[1]) : kCmps.end();
      if (it == kCmps.end()) unsupported("setp needs one of .eq .ne .lt .le .gt .ge");
      in.cmp = it->second;
      in.op = Opcode::kSetp;
    } else if (base == "selp") {
      allow({});
      in.op = Opcode::kSelp;
    } else {
      unsupported("not in the interpreter's subset");
    }
  }

  void check_arity(const Tok& t, const Instruction& in) {
    std::size_t want = 0;
    switch (in.op) {
      case Opcode::kRet:
        want = 0;
        break;
      case Opcode::kBra:
        want = 1;
        break;
      case Opcode::kFma:
      case Opcode::kMad:
      case Opcode::kSelp:
        want = 4;
        break;
      case Opcode::kLdParam:
      case Opcode::kLdGlobal:
      case Opcode::kStGlobal:
      case Opcode::kCvtaToGlobal:
      case Opcode::kMov:
      case Opcode::kCvt:
      case Opcode::kNeg:
      case Opcode::kAbs:
      case Opcode::kSqrt:
        want = 2;
        break;
      default:
        want = 3;
    }
    if (in.ops.size() != want)
      fail(t, fmt::format("'{}' takes {} operands, {} given", t.text, want, in.ops.size()));
    const auto kind = [&](std::size_t k) { return in.ops[k].kind; };
    using K = Operand::Kind;
    const bool ok = [&] {
      switch (in.op) {
        case Opcode::kRet:
          return true;
        case Opcode::kBra:
          return kind(0) == K::kLabel;
        case Opcode::kLdParam:
          return kind(0) == K::kReg && kind(1) == K::kMem && in.ops[1].index >= 0;
        case Opcode::kLdGlobal:
          return kind(0) == K::kReg && kind(1) == K::kMem && in.ops[1].reg >= 0;
        case Opcode::kStGlobal:
          return kind(0) == K::kMem && in.ops[0].reg >= 0 && kind(1) != K::kMem;
        default:
          if (kind(0) != K::kReg) return false;
          for (std::size_t k = 1; k < in.ops.size(); ++k)
            if (kind(k) == K::kMem || kind(k) == K::kLabel || kind(k) == K::kParam) return false;
          return true;
      }
    }();
    if (!ok) fail(t, fmt::format("bad operands for '{}'", t.text));
  }

  // operand := REG | SPECIAL | ['-'] INT | 0fHEX | FLOAT | '[' (REG | PARAM) ['+' INT] ']' | LABEL
  Operand operand(const Entry& e) {
    Operand op;
    if (peek_is("[")) {
      next();
      const Tok& base = expect_word("an address");
      op.kind = Operand::Kind::kMem;
      if (base.text[0] == '%') {
        op.reg = reg(base);
      } else {
        for (std::size_t p = 0; p < e.params.size(); ++p)
          if (e.params[p].name == base.text) op.index = static_cast<int>(p);
        if (op.index < 0)
          fail(base, fmt::format("'{}' is not a parameter of this entry", base.text));
      }
      if (peek_is("+")) {
        next();
        op.imm = to_int(expect_word("an offset"));
      }
      expect("]");
      return op;
    }
    bool negative = false;
    if (peek_is("-")) {
      next();
      negative = true;
    }
    const Tok& t = expect_word("an operand");
    const std::string& s = t.text;
    if (s[0] == '%') {
      if (negative) fail(t, "negated registers are not PTX");
      static const std::map<std::string_view, Special> kSpecials = {{"%tid", Special::kTid},
                                                                    {"%ntid", Special::kNtid},
                                                                    {"%ctaid", Special::kCtaid},
                                                                    {"%nctaid", Special::kNctaid}};
      const auto dot = s.find('.');
      if (dot != std::string::npos) {
        const auto it = kSpecials.find(std::string_view(s).substr(0, dot));
        const std::string_view dim = std::string_view(s).substr(dot + 1);
        if (it == kSpecials.end() || (dim != "x" && dim != "y" && dim != "z"))
          fail(t, fmt::format("unsupported special register '{}'", s));
        op.kind = Operand::Kind::kSpecial;
        op.special = it->second;
        op.dim = dim[0] - 'x';
        return op;
      }
      op.kind = Operand::Kind::kReg;
      op.reg = reg(t);
      return op;
    }
    if (s.size() == 10 && (s.rfind("0f", 0) == 0 || s.rfind("0F", 0) == 0)) {
      std::uint32_t bits = 0;
      const auto [end, ec] = std::from_chars(s.data() + 2, s.data() + s.size(), bits, 16);
      if (ec != std::errc{} || end != s.data() + s.size())
        fail(t, fmt::format("bad f32 literal '{}'", s));
      op.kind = Operand::Kind::kImmF32;
      op.fimm = std::bit_cast<float>(bits);
      if (negative) op.fimm = -op.fimm;
      return op;
    }
    if (std::isdigit(static_cast<unsigned char>(s[0])) != 0) {
      if (s.find('.') != std::string::npos) {
        char* end = nullptr;
        const double d = std::strtod(s.c_str(), &end);
        if (end != s.c_str() + s.size()) fail(t, fmt::format("bad number '{}'", s));
        op.kind = Operand::Kind::kImmF32;
        op.fimm = static_cast<float>(negative ? -d : d);
        return op;
      }
      op.kind = Operand::Kind::kImmInt;
      op.imm = to_int(t);
      if (negative) op.imm = -op.imm;
      return op;
    }
    if (negative) fail(t, fmt::format("unexpected '-' before '{}'", s));
    op.kind = Operand::Kind::kLabel;
    op.index = static_cast<int>(label_names_.size());
    label_names_.push_back(s);
    return op;
  }

  int reg(const Tok& t) {
    const auto it = registers_.find(t.text);
    if (it == registers_.end()) fail(t, fmt::format("register '{}' is not declared", t.text));
    return it->second;
  }

  int to_int(const Tok& t) {
    int v = 0;
    const char* first = t.text.data();
    const char* last = first + t.text.size();
    int base = 10;
    if (t.text.size() > 2 && t.text[0] == '0' && (t.text[1] == 'x' || t.text[1] == 'X')) {
      first += 2;
      base = 16;
    }
    const auto [end, ec] = std::from_chars(first, last, v, base);
    if (ec != std::errc{} || end != last) fail(t, fmt::format("bad integer '{}'", t.text));
    return v;
  }

  [[nodiscard]] bool at_end() const { return pos_ >= toks_.size(); }
  [[nodiscard]] bool peek_is(std::string_view s) const {
    return !at_end() && toks_[pos_].text == s;
  }
  const Tok& peek() const { return toks_[pos_]; }
  const Tok& next() {
    if (at_end()) throw ParseError(fmt::format("line {}: unexpected end of file", last_line()));
    return toks_[pos_++];
  }
  void expect(std::string_view s) {
    if (!peek_is(s))
      throw ParseError(fmt::format("line {}: expected '{}', found {}",
                                   at_end() ? last_line() : peek().line, s,
                                   at_end() ? "end of file" : fmt::format("'{}'", peek().text)));
    next();
  }
  const Tok& expect_word(std::string_view what) {
    if (at_end() || !peek().word)
      throw ParseError(fmt::format("line {}: expected {}, found {}",
                                   at_end() ? last_line() : peek().line, what,
                                   at_end() ? "end of file" : fmt::format("'{}'", peek().text)));
    return next();
  }
  [[noreturn]] static void fail(const Tok& t, const std::string& message) {
    throw ParseError(fmt::format("line {}: {}", t.line, message));
  }
  [[nodiscard]] int last_line() const { return toks_.empty() ? 1 : toks_.back().line; }

  static constexpr std::size_t kMaxRegisters = 1 << 16;

  std::vector<Tok> toks_;
  std::size_t pos_ = 0;
  std::unordered_map<std::string, int> registers_;
  std::vector<std::string> label_names_;
};

}  // namespace

Module parse_ptx(std::string_view text) {
  return Parser(text).module();
}

}  // namespace ptxc::ptx
