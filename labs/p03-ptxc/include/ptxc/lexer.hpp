// Stage 1: characters -> tokens. `c[i] = a[i] * 2.0` becomes
// IDENT(c) LBRACKET IDENT(i) RBRACKET ASSIGN IDENT(a) ... NUMBER(2.0).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "ptxc/diagnostics.hpp"

namespace ptxc {

enum class Tok {
  kIdent,
  kNumber,
  kKernel,
  kLet,
  kLParen,
  kRParen,
  kLBrace,
  kRBrace,
  kLBracket,
  kRBracket,
  kColon,
  kComma,
  kSemicolon,
  kAssign,
  kPlus,
  kMinus,
  kStar,
  kSlash,
  kEof,
};

struct Token {
  Tok kind = Tok::kEof;
  std::string text;  // the exact source spelling
  SourceLoc loc;
};

// "IDENT", "NUMBER", "'('", ... as used in "expected X" messages.
std::string_view token_name(Tok kind);

// Lexes the whole source. A character outside the language is reported and
// skipped, so one stray byte does not hide the errors after it. The result
// always ends with kEof.
std::vector<Token> lex(std::string_view source, Diagnostics& diags);

}  // namespace ptxc
