#include "ptxc/sema.hpp"

#include <fmt/format.h>

#include <map>
#include <set>

#include "ptxc/intrinsics.hpp"

namespace ptxc {

namespace {

struct Scope {
  std::map<std::string, Type, std::less<>> names;  // parameters and lets
};

void check_expr(const Expr& e, const Scope& scope, Diagnostics& diags);

void check_index(const Expr& index, Diagnostics& diags) {
  if (index.kind != ExprKind::kVar || index.name != kIndexName)
    diags.error(index.loc, "the subscript must be the thread index 'i' (kernels are elementwise)");
}

void check_expr(const Expr& e, const Scope& scope, Diagnostics& diags) {
  switch (e.kind) {
    case ExprKind::kNumber:
      return;
    case ExprKind::kVar: {
      if (e.name == kIndexName) {
        diags.error(e.loc,
                    "'i' is the thread index and can only be used as a subscript, as in x[i]");
        return;
      }
      const auto it = scope.names.find(e.name);
      if (it == scope.names.end()) {
        if (e.name == kCountName)
          diags.error(e.loc, "'n' is the hidden element count and cannot be used in expressions");
        else
          diags.error(e.loc, fmt::format("use of undefined name '{}'", e.name));
      } else if (it->second == Type::kF32Ptr) {
        diags.error(e.loc, fmt::format("pointer '{}' used as a value; did you mean {}[i]?", e.name,
                                       e.name));
      }
      return;
    }
    case ExprKind::kIndex: {
      const auto it = scope.names.find(e.name);
      if (it == scope.names.end())
        diags.error(e.loc, fmt::format("use of undefined name '{}'", e.name));
      else if (it->second != Type::kF32Ptr)
        diags.error(e.loc, fmt::format("'{}' is an f32 scalar and cannot be indexed", e.name));
      check_index(*e.args[0], diags);
      return;
    }
    case ExprKind::kCall: {
      const auto info = find_intrinsic(e.name);
      if (!info) {
        diags.error(
            e.loc, fmt::format("unknown function '{}' (known: min, max, relu, abs, sqrt)", e.name));
      } else if (static_cast<int>(e.args.size()) != info->arity) {
        diags.error(e.loc, fmt::format("'{}' takes {} argument{}, {} given", e.name, info->arity,
                                       info->arity == 1 ? "" : "s", e.args.size()));
      }
      break;
    }
    case ExprKind::kUnary:
    case ExprKind::kBinary:
      break;
  }
  for (const auto& a : e.args) check_expr(*a, scope, diags);
}

void check_kernel(const Kernel& k, Diagnostics& diags) {
  Scope scope;
  for (const auto& p : k.params) {
    if (p.name == kIndexName || p.name == kCountName) {
      diags.error(p.loc, fmt::format("parameter name '{}' is reserved ({})", p.name,
                                     p.name == kIndexName ? "the thread index"
                                                          : "the hidden element count"));
    } else if (find_intrinsic(p.name)) {
      diags.error(p.loc, fmt::format("parameter name '{}' is a built-in function", p.name));
    } else if (!scope.names.emplace(p.name, p.type).second) {
      diags.error(p.loc, fmt::format("duplicate parameter '{}'", p.name));
    }
  }
  for (const auto& s : k.body) {
    check_expr(*s.value, scope, diags);
    if (s.kind == StmtKind::kStore) {
      const auto it = scope.names.find(s.name);
      if (it == scope.names.end())
        diags.error(s.loc, fmt::format("store to undefined name '{}'", s.name));
      else if (it->second != Type::kF32Ptr)
        diags.error(
            s.loc, fmt::format("cannot store through '{}': it is an f32 scalar, not f32*", s.name));
      check_index(*s.index, diags);
    } else if (s.name == kIndexName || s.name == kCountName || find_intrinsic(s.name)) {
      diags.error(s.loc, fmt::format("'{}' is reserved and cannot be redefined", s.name));
    } else if (!scope.names.emplace(s.name, Type::kF32).second) {
      // Lets are single-assignment: the program stays in SSA form for free.
      diags.error(s.loc, fmt::format("'{}' is already defined", s.name));
    }
  }
}

}  // namespace

void check(const Program& program, Diagnostics& diags) {
  std::set<std::string, std::less<>> seen;
  for (const auto& k : program.kernels) {
    if (!seen.insert(k.name).second)
      diags.error(k.loc, fmt::format("duplicate kernel '{}'", k.name));
    check_kernel(k, diags);
  }
}

}  // namespace ptxc
