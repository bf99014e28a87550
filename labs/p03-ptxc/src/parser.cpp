#include "ptxc/parser.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>

namespace ptxc {

namespace {

// Unwinds to the enclosing statement or kernel after a reported syntax error.
struct SyntaxError {};

class Parser {
 public:
  Parser(const std::vector<Token>& toks, Diagnostics& diags) : toks_(toks), diags_(diags) {}

  // program := kernel*
  Program program() {
    Program prog;
    while (peek().kind != Tok::kEof && diags_.errors().size() < Diagnostics::kMaxErrors) {
      try {
        prog.kernels.push_back(kernel());
      } catch (const SyntaxError&) {
        // Resume at the next `kernel` keyword.
        while (peek().kind != Tok::kEof && peek().kind != Tok::kKernel) ++pos_;
      }
    }
    return prog;
  }

 private:
  // kernel := 'kernel' IDENT '(' [param (',' param)*] ')' '{' stmt* '}'
  Kernel kernel() {
    Kernel k;
    k.loc = expect(Tok::kKernel, "at the start of a kernel").loc;
    k.name = expect(Tok::kIdent, "as the kernel name").text;
    expect(Tok::kLParen, "after the kernel name");
    if (peek().kind != Tok::kRParen) {
      k.params.push_back(param());
      while (accept(Tok::kComma)) k.params.push_back(param());
    }
    expect(Tok::kRParen, "to close the parameter list");
    expect(Tok::kLBrace, "to open the kernel body");
    while (peek().kind != Tok::kRBrace && peek().kind != Tok::kEof && peek().kind != Tok::kKernel) {
      try {
        k.body.push_back(stmt());
      } catch (const SyntaxError&) {
        synchronize();
      }
    }
    expect(Tok::kRBrace, "to close the kernel body");
    return k;
  }

  // param := IDENT ':' 'f32' ['*']
  Param param() {
    Param p;
    const Token& name = expect(Tok::kIdent, "as a parameter name");
    p.name = name.text;
    p.loc = name.loc;
    expect(Tok::kColon, "after the parameter name");
    const Token& type = expect(Tok::kIdent, "as the parameter type (f32 or f32*)");
    if (type.text != "f32")
      fail(type.loc, fmt::format("unknown type '{}' (the language has f32 and f32*)", type.text));
    p.type = accept(Tok::kStar) ? Type::kF32Ptr : Type::kF32;
    return p;
  }

  // stmt := IDENT '[' expr ']' '=' expr ';'  |  'let' IDENT '=' expr ';'
  Stmt stmt() {
    Stmt s;
    if (peek().kind == Tok::kLet) {
      s.kind = StmtKind::kLet;
      s.loc = next().loc;
      s.name = expect(Tok::kIdent, "after 'let'").text;
      expect(Tok::kAssign, "after the name in a 'let'");
    } else {
      s.kind = StmtKind::kStore;
      const Token& target = expect(Tok::kIdent, "at the start of a statement");
      s.name = target.text;
      s.loc = target.loc;
      expect(Tok::kLBracket, "after the store target (statements look like ptr[i] = expr;)");
      s.index = expr();
      expect(Tok::kRBracket, "to close the subscript");
      expect(Tok::kAssign, "after the store target");
    }
    s.value = expr();
    expect(Tok::kSemicolon, "at the end of the statement");
    return s;
  }

  // expr := term (('+' | '-') term)*
  ExprPtr expr() {
    const DepthGuard guard(*this);
    ExprPtr lhs = term();
    while (peek().kind == Tok::kPlus || peek().kind == Tok::kMinus) {
      const Token& op = next();
      lhs = binary(op, std::move(lhs), term());
    }
    return lhs;
  }

  // term := unary (('*' | '/') unary)*
  ExprPtr term() {
    ExprPtr lhs = unary();
    while (peek().kind == Tok::kStar || peek().kind == Tok::kSlash) {
      const Token& op = next();
      lhs = binary(op, std::move(lhs), unary());
    }
    return lhs;
  }

  // unary := '-' unary | primary
  ExprPtr unary() {
    if (peek().kind != Tok::kMinus) return primary();
    const DepthGuard guard(*this);
    auto e = std::make_unique<Expr>();
    e->kind = ExprKind::kUnary;
    e->op = '-';
    e->loc = next().loc;
    e->args.push_back(unary());
    return bounded(std::move(e));
  }

  // primary := NUMBER | IDENT | IDENT '[' expr ']' | IDENT '(' [expr (',' expr)*] ')' | '(' expr
  // ')'
  ExprPtr primary() {
    const Token& t = peek();
    auto e = std::make_unique<Expr>();
    e->loc = t.loc;
    if (t.kind == Tok::kNumber) {
      next();
      e->kind = ExprKind::kNumber;
      e->value = literal(t);
      return e;
    }
    if (t.kind == Tok::kLParen) {
      next();
      ExprPtr inner = expr();
      expect(Tok::kRParen, "to close the parenthesis");
      return inner;
    }
    if (t.kind != Tok::kIdent)
      fail(t.loc, fmt::format("expected an expression, found {}", describe(t)));
    next();
    e->name = t.text;
    if (accept(Tok::kLBracket)) {
      e->kind = ExprKind::kIndex;
      e->args.push_back(expr());
      expect(Tok::kRBracket, "to close the subscript");
    } else if (accept(Tok::kLParen)) {
      e->kind = ExprKind::kCall;
      if (peek().kind != Tok::kRParen) {
        e->args.push_back(expr());
        while (accept(Tok::kComma)) e->args.push_back(expr());
      }
      expect(Tok::kRParen, "to close the argument list");
    } else {
      e->kind = ExprKind::kVar;
    }
    return bounded(std::move(e));
  }

  ExprPtr binary(const Token& op, ExprPtr lhs, ExprPtr rhs) {
    auto e = std::make_unique<Expr>();
    e->kind = ExprKind::kBinary;
    e->op = op.text[0];
    e->loc = op.loc;
    e->args.push_back(std::move(lhs));
    e->args.push_back(std::move(rhs));
    return bounded(std::move(e));
  }

  // Sets e's height from its children. A chain like a + a + ... + a is parsed
  // by a loop but is as deep as it is long, and sema, lowering and the AST's
  // own destructor walk it recursively: past kMaxExprHeight it is an error at
  // the operator that crossed the cap, not a stack overflow.
  ExprPtr bounded(ExprPtr e) {
    for (const auto& a : e->args) e->height = std::max(e->height, a->height + 1);
    if (e->height > kMaxExprHeight)
      fail(e->loc, fmt::format("expression too deep: more than {} levels of operations (split it "
                               "into steps with 'let')",
                               kMaxExprHeight));
    return e;
  }

  // The literal rounded once, decimal -> f32 (strtof), never through double.
  float literal(const Token& t) {
    errno = 0;
    const float v = std::strtof(t.text.c_str(), nullptr);
    if (std::isinf(v)) diags_.error(t.loc, fmt::format("literal '{}' does not fit in f32", t.text));
    return v;
  }

  // Skips to just past the next ';' (or up to a '}'), the statement boundary.
  void synchronize() {
    while (peek().kind != Tok::kEof) {
      const Tok k = peek().kind;
      if (k == Tok::kRBrace || k == Tok::kKernel) return;
      ++pos_;
      if (k == Tok::kSemicolon) return;
    }
  }

  const Token& peek() const { return toks_[pos_]; }
  const Token& next() {
    const Token& t = toks_[pos_];
    if (t.kind != Tok::kEof) ++pos_;
    return t;
  }
  bool accept(Tok kind) {
    if (peek().kind != kind) return false;
    next();
    return true;
  }
  const Token& expect(Tok kind, std::string_view where) {
    if (peek().kind != kind)
      fail(peek().loc,
           fmt::format("expected {} {}, found {}", token_name(kind), where, describe(peek())));
    return next();
  }
  static std::string describe(const Token& t) {
    if (t.kind == Tok::kEof) return "end of file";
    return fmt::format("'{}'", t.text);
  }
  [[noreturn]] void fail(SourceLoc loc, std::string message) {
    diags_.error(loc, std::move(message));
    throw SyntaxError{};
  }

  // Deeply nested input would otherwise overflow the stack of a recursive parser.
  struct DepthGuard {
    explicit DepthGuard(Parser& p) : parser(p) {
      if (++parser.depth_ > kMaxDepth) {
        --parser.depth_;  // the destructor will not run for a throwing constructor
        parser.fail(parser.peek().loc, "expression nested too deeply");
      }
    }
    ~DepthGuard() { --parser.depth_; }
    DepthGuard(const DepthGuard&) = delete;
    DepthGuard& operator=(const DepthGuard&) = delete;
    Parser& parser;
  };
  static constexpr int kMaxDepth = 256;
  static constexpr int kMaxExprHeight = 1000;

  const std::vector<Token>& toks_;
  Diagnostics& diags_;
  std::size_t pos_ = 0;
  int depth_ = 0;
};

}  // namespace

Program parse(const std::vector<Token>& tokens, Diagnostics& diags) {
  return Parser(tokens, diags).program();
}

}  // namespace ptxc
