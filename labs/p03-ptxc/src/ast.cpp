#include "ptxc/ast.hpp"

#include <fmt/format.h>

namespace ptxc {

namespace {

std::string dump_expr(const Expr& e) {
  switch (e.kind) {
    case ExprKind::kNumber:
      return fmt::format("{}", e.value);
    case ExprKind::kVar:
      return e.name;
    case ExprKind::kIndex:
      return fmt::format("(index {} {})", e.name, dump_expr(*e.args[0]));
    case ExprKind::kUnary:
      return fmt::format("(neg {})", dump_expr(*e.args[0]));
    case ExprKind::kBinary:
      return fmt::format("({} {} {})", e.op, dump_expr(*e.args[0]), dump_expr(*e.args[1]));
    case ExprKind::kCall: {
      std::string s = "(" + e.name;
      for (const auto& a : e.args) s += " " + dump_expr(*a);
      return s + ")";
    }
  }
  return "?";
}

}  // namespace

std::string dump_ast(const Program& program) {
  std::string out;
  for (const auto& k : program.kernels) {
    out += fmt::format("(kernel {}\n  (params", k.name);
    for (const auto& p : k.params)
      out += fmt::format(" ({} {})", p.name, p.type == Type::kF32 ? "f32" : "f32*");
    out += ")";
    for (const auto& s : k.body) {
      if (s.kind == StmtKind::kStore)
        out +=
            fmt::format("\n  (store {} {} {})", s.name, dump_expr(*s.index), dump_expr(*s.value));
      else
        out += fmt::format("\n  (let {} {})", s.name, dump_expr(*s.value));
    }
    out += ")\n";
  }
  return out;
}

}  // namespace ptxc
