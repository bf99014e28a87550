#include <cmath>

#include "ptxc/passes.hpp"

namespace ptxc {

namespace {

// The arithmetic of the target, in float. The library is built with
// -ffp-contract=off, so `x * y + z` here is two roundings, like mul.rn + add.rn.
bool evaluate(Op op, float x, float y, float z, float& out) {
  switch (op) {
    case Op::kAdd:
      out = x + y;
      return true;
    case Op::kSub:
      out = x - y;
      return true;
    case Op::kMul:
      out = x * y;
      return true;
    case Op::kDiv:
      out = x / y;
      return true;
    case Op::kFma:
      out = std::fma(x, y, z);
      return true;
    case Op::kNeg:
      out = -x;
      return true;
    case Op::kAbs:
      out = std::fabs(x);
      return true;
    case Op::kSqrt:
      out = std::sqrt(x);
      return true;
    case Op::kMin:
      out = std::fmin(x, y);
      return true;
    case Op::kMax:
      out = std::fmax(x, y);
      return true;
    default:
      return false;
  }
}

}  // namespace

int fold_constants(Function& fn) {
  int folded = 0;
  for (Inst& in : fn.insts) {
    const int n = operand_count(in);
    if (n == 0 || has_effect(in.op) || in.op == Op::kLoad || is_address(in.op)) continue;
    const int ops[3] = {in.a, in.b, in.c};
    float vals[3] = {0.0F, 0.0F, 0.0F};
    bool all_const = true;
    for (int k = 0; k < n; ++k) {
      const Inst& src = fn.insts[static_cast<std::size_t>(ops[k])];
      all_const = all_const && src.op == Op::kConst;
      vals[k] = src.imm;
    }
    float result = 0.0F;
    if (all_const && evaluate(in.op, vals[0], vals[1], vals[2], result)) {
      // Operands stay behind, unused; dead-code elimination removes them.
      in = Inst{.op = Op::kConst, .imm = result};
      ++folded;
    }
  }
  return folded;
}

}  // namespace ptxc
