#include "ptxc/passes.hpp"

namespace ptxc {

int eliminate_dead_code(Function& fn) {
  // Operands always precede their users, so one backward sweep finds every
  // value a store depends on.
  std::vector<bool> live(fn.insts.size(), false);
  for (std::size_t v = fn.insts.size(); v-- > 0;) {
    const Inst& in = fn.insts[v];
    if (has_effect(in.op)) live[v] = true;
    if (!live[v]) continue;
    const int ops[3] = {in.a, in.b, in.c};
    for (int k = 0; k < operand_count(in); ++k) live[static_cast<std::size_t>(ops[k])] = true;
  }
  std::vector<int> repl(fn.insts.size(), kNone);
  std::vector<Inst> kept;
  for (std::size_t v = 0; v < fn.insts.size(); ++v) {
    if (!live[v]) continue;
    Inst in = fn.insts[v];
    rewrite_operands(in, repl);
    repl[v] = static_cast<int>(kept.size());
    kept.push_back(in);
  }
  const int removed = static_cast<int>(fn.insts.size() - kept.size());
  fn.insts = std::move(kept);
  return removed;
}

}  // namespace ptxc
