// The middle end: a kernel body as a flat list of SSA values (every value is
// defined once, by the instruction at its index). Addresses are values too,
// so the same CSE that merges `a[i] + a[i]` merges the `i*4` byte offset and
// the per-pointer address: the curriculum's "compute the offset once" falls out
// of a general pass rather than a special case in the emitter.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ptxc/ast.hpp"

namespace ptxc {

enum class Op : std::uint8_t {
  // f32 values
  kConst,  // imm
  kParam,  // the scalar parameter `param`
  kLoad,   // *a                       (a is an address)
  kAdd,
  kSub,
  kMul,
  kDiv,  // a op b
  kFma,  // a * b + c, one rounding
  kNeg,
  kAbs,
  kSqrt,  // op a
  kMin,
  kMax,  // a, b
  // 64-bit address arithmetic
  kBase,    // the global-space base of pointer parameter `param` (cvta.to.global)
  kOffset,  // i * 4, the byte offset of element i (mul.wide.s32)
  kAddr,    // a + b: base + offset (add.s64)
  // effects
  kStore,  // *a = b
};

inline constexpr int kNone = -1;

struct Inst {
  Op op = Op::kConst;
  int a = kNone, b = kNone, c = kNone;  // operand value ids
  int param = kNone;                    // kParam, kBase: index into Function::params
  float imm = 0.0F;                     // kConst
};

struct Function {
  std::string name;
  std::vector<Param> params;  // the user's parameters, in order
  std::vector<Inst> insts;
};

[[nodiscard]] bool has_effect(Op op);      // kStore: never removed, never merged
[[nodiscard]] bool is_address(Op op);      // a 64-bit value (kBase, kOffset, kAddr)
[[nodiscard]] bool is_commutative(Op op);  // add, mul, min, max
[[nodiscard]] int operand_count(const Inst& inst);
[[nodiscard]] std::string_view op_name(Op op);

// One instruction per line, "%3 = add %1, %2" (tests and --emit ir).
std::string dump_ir(const Function& fn);

// AST -> IR, naively: every load, address and constant as written. Assumes
// check() accepted the program.
Function lower(const Kernel& kernel);

}  // namespace ptxc

namespace ptxc {

// Replaces each operand v of `inst` by repl[v] (passes record merges there).
void rewrite_operands(Inst& inst, const std::vector<int>& repl);
// repl[v] = v for every value: the identity a pass starts from.
std::vector<int> identity_map(const Function& fn);

}  // namespace ptxc
