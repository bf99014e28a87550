#include "ptxc/passes.hpp"

namespace ptxc {

int contract_fma(Function& fn) {
  std::vector<int> uses(fn.insts.size(), 0);
  for (const Inst& in : fn.insts) {
    const int ops[3] = {in.a, in.b, in.c};
    for (int k = 0; k < operand_count(in); ++k) ++uses[static_cast<std::size_t>(ops[k])];
  }
  const auto single_use_mul = [&](int v) {
    return fn.insts[static_cast<std::size_t>(v)].op == Op::kMul &&
           uses[static_cast<std::size_t>(v)] == 1;
  };
  int contracted = 0;
  for (Inst& in : fn.insts) {
    if (in.op != Op::kAdd) continue;
    int mul = kNone;
    int addend = kNone;
    if (single_use_mul(in.a)) {
      mul = in.a;
      addend = in.b;
    } else if (single_use_mul(in.b)) {
      mul = in.b;
      addend = in.a;
    } else {
      continue;
    }
    const Inst& m = fn.insts[static_cast<std::size_t>(mul)];
    in = Inst{.op = Op::kFma, .a = m.a, .b = m.b, .c = addend};
    --uses[static_cast<std::size_t>(mul)];  // the product is now dead
    ++contracted;
  }
  return contracted;
}

}  // namespace ptxc
