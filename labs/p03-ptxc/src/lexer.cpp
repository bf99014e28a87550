#include "ptxc/lexer.hpp"

#include <fmt/format.h>

#include <cctype>

namespace ptxc {

std::string_view token_name(Tok kind) {
  switch (kind) {
    case Tok::kIdent:
      return "IDENT";
    case Tok::kNumber:
      return "NUMBER";
    case Tok::kKernel:
      return "'kernel'";
    case Tok::kLet:
      return "'let'";
    case Tok::kLParen:
      return "'('";
    case Tok::kRParen:
      return "')'";
    case Tok::kLBrace:
      return "'{'";
    case Tok::kRBrace:
      return "'}'";
    case Tok::kLBracket:
      return "'['";
    case Tok::kRBracket:
      return "']'";
    case Tok::kColon:
      return "':'";
    case Tok::kComma:
      return "','";
    case Tok::kSemicolon:
      return "';'";
    case Tok::kAssign:
      return "'='";
    case Tok::kPlus:
      return "'+'";
    case Tok::kMinus:
      return "'-'";
    case Tok::kStar:
      return "'*'";
    case Tok::kSlash:
      return "'/'";
    case Tok::kEof:
      return "end of file";
  }
  return "?";
}

namespace {

bool is_ident_start(char c) {
  return std::isalpha(static_cast<unsigned char>(c)) != 0 || c == '_';
}
bool is_ident_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_';
}
bool is_digit(char c) {
  return std::isdigit(static_cast<unsigned char>(c)) != 0;
}

class Lexer {
 public:
  Lexer(std::string_view src, Diagnostics& diags) : src_(src), diags_(diags) {}

  std::vector<Token> run() {
    std::vector<Token> out;
    for (;;) {
      skip_space_and_comments();
      const SourceLoc loc = here();
      if (pos_ >= src_.size()) {
        out.push_back({Tok::kEof, "", loc});
        return out;
      }
      const char c = src_[pos_];
      if (is_ident_start(c)) {
        const auto start = pos_;
        while (pos_ < src_.size() && is_ident_char(src_[pos_])) advance();
        std::string text(src_.substr(start, pos_ - start));
        Tok kind = text == "kernel" ? Tok::kKernel : text == "let" ? Tok::kLet : Tok::kIdent;
        out.push_back({kind, std::move(text), loc});
      } else if (is_digit(c) || (c == '.' && pos_ + 1 < src_.size() && is_digit(src_[pos_ + 1]))) {
        out.push_back({Tok::kNumber, number(), loc});
      } else if (const Tok kind = punct(c); kind != Tok::kEof) {
        advance();
        out.push_back({kind, std::string(1, c), loc});
      } else {
        diags_.error(loc, fmt::format("unexpected character '{}'", printable(c)));
        advance();
      }
    }
  }

 private:
  // NUMBER := DIGITS ['.' DIGITS*] [('e'|'E') ['+'|'-'] DIGITS]  |  '.' DIGITS ...
  std::string number() {
    const auto start = pos_;
    while (pos_ < src_.size() && is_digit(src_[pos_])) advance();
    if (pos_ < src_.size() && src_[pos_] == '.') {
      advance();
      while (pos_ < src_.size() && is_digit(src_[pos_])) advance();
    }
    if (pos_ < src_.size() && (src_[pos_] == 'e' || src_[pos_] == 'E')) {
      std::size_t look = pos_ + 1;
      if (look < src_.size() && (src_[look] == '+' || src_[look] == '-')) ++look;
      if (look < src_.size() && is_digit(src_[look])) {
        while (pos_ < look) advance();
        while (pos_ < src_.size() && is_digit(src_[pos_])) advance();
      }
    }
    return std::string(src_.substr(start, pos_ - start));
  }

  static Tok punct(char c) {
    switch (c) {
      case '(':
        return Tok::kLParen;
      case ')':
        return Tok::kRParen;
      case '{':
        return Tok::kLBrace;
      case '}':
        return Tok::kRBrace;
      case '[':
        return Tok::kLBracket;
      case ']':
        return Tok::kRBracket;
      case ':':
        return Tok::kColon;
      case ',':
        return Tok::kComma;
      case ';':
        return Tok::kSemicolon;
      case '=':
        return Tok::kAssign;
      case '+':
        return Tok::kPlus;
      case '-':
        return Tok::kMinus;
      case '*':
        return Tok::kStar;
      case '/':
        return Tok::kSlash;
      default:
        return Tok::kEof;  // "not punctuation"
    }
  }

  static std::string printable(char c) {
    const auto u = static_cast<unsigned char>(c);
    return (u >= 0x20 && u < 0x7f) ? std::string(1, c) : fmt::format("\\x{:02x}", u);
  }

  void skip_space_and_comments() {
    while (pos_ < src_.size()) {
      const char c = src_[pos_];
      if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
        advance();
      } else if (c == '/' && pos_ + 1 < src_.size() && src_[pos_ + 1] == '/') {
        while (pos_ < src_.size() && src_[pos_] != '\n') advance();
      } else {
        return;
      }
    }
  }

  void advance() {
    if (src_[pos_] == '\n') {
      ++line_;
      col_ = 1;
    } else {
      ++col_;
    }
    ++pos_;
  }
  [[nodiscard]] SourceLoc here() const { return {line_, col_}; }

  std::string_view src_;
  Diagnostics& diags_;
  std::size_t pos_ = 0;
  int line_ = 1;
  int col_ = 1;
};

}  // namespace

std::vector<Token> lex(std::string_view source, Diagnostics& diags) {
  return Lexer(source, diags).run();
}

}  // namespace ptxc
