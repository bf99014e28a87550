#include <bit>
#include <map>
#include <tuple>

#include "ptxc/passes.hpp"

namespace ptxc {

int eliminate_common_subexpressions(Function& fn) {
  // The key is the whole instruction; a constant is keyed by its bits so that
  // 0.0 and -0.0 stay distinct.
  using Key = std::tuple<Op, int, int, int, int, std::uint32_t>;
  std::map<Key, int> seen;
  std::vector<int> repl = identity_map(fn);
  int merged = 0;
  for (std::size_t v = 0; v < fn.insts.size(); ++v) {
    Inst& in = fn.insts[v];
    rewrite_operands(in, repl);
    if (has_effect(in.op)) {
      // A store may write any buffer: forget every load seen so far.
      std::erase_if(seen, [](const auto& entry) { return std::get<0>(entry.first) == Op::kLoad; });
      continue;
    }
    int a = in.a;
    int b = in.b;
    if (is_commutative(in.op) && a > b) std::swap(a, b);
    const Key key{in.op, a, b, in.c, in.param, std::bit_cast<std::uint32_t>(in.imm)};
    if (const auto [it, inserted] = seen.emplace(key, static_cast<int>(v)); !inserted) {
      repl[v] = it->second;
      ++merged;
    }
  }
  return merged;
}

}  // namespace ptxc
