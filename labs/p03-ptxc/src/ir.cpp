#include "ptxc/ir.hpp"

#include <fmt/format.h>

#include <map>

#include "ptxc/intrinsics.hpp"

namespace ptxc {

bool has_effect(Op op) {
  return op == Op::kStore;
}
bool is_address(Op op) {
  return op == Op::kBase || op == Op::kOffset || op == Op::kAddr;
}
bool is_commutative(Op op) {
  return op == Op::kAdd || op == Op::kMul || op == Op::kMin || op == Op::kMax;
}

int operand_count(const Inst& inst) {
  switch (inst.op) {
    case Op::kConst:
    case Op::kParam:
    case Op::kBase:
    case Op::kOffset:
      return 0;
    case Op::kLoad:
    case Op::kNeg:
    case Op::kAbs:
    case Op::kSqrt:
      return 1;
    case Op::kFma:
      return 3;
    default:
      return 2;
  }
}

std::string_view op_name(Op op) {
  switch (op) {
    case Op::kConst:
      return "const";
    case Op::kParam:
      return "param";
    case Op::kLoad:
      return "load";
    case Op::kAdd:
      return "add";
    case Op::kSub:
      return "sub";
    case Op::kMul:
      return "mul";
    case Op::kDiv:
      return "div";
    case Op::kFma:
      return "fma";
    case Op::kNeg:
      return "neg";
    case Op::kAbs:
      return "abs";
    case Op::kSqrt:
      return "sqrt";
    case Op::kMin:
      return "min";
    case Op::kMax:
      return "max";
    case Op::kBase:
      return "base";
    case Op::kOffset:
      return "offset";
    case Op::kAddr:
      return "addr";
    case Op::kStore:
      return "store";
  }
  return "?";
}

std::string dump_ir(const Function& fn) {
  std::string out;
  for (std::size_t v = 0; v < fn.insts.size(); ++v) {
    const Inst& in = fn.insts[v];
    std::string rhs{op_name(in.op)};
    if (in.op == Op::kConst) rhs += fmt::format(" {}", in.imm);
    if (in.op == Op::kParam || in.op == Op::kBase)
      rhs += " " + fn.params[static_cast<std::size_t>(in.param)].name;
    const int ops[3] = {in.a, in.b, in.c};
    for (int k = 0; k < operand_count(in); ++k)
      rhs += fmt::format("{}%{}", k == 0 ? " " : ", ", ops[k]);
    out +=
        has_effect(in.op) ? fmt::format("      {}\n", rhs) : fmt::format("%{:<3} = {}\n", v, rhs);
  }
  return out;
}

namespace {

class Lowering {
 public:
  explicit Lowering(const Kernel& k) {
    fn_.name = k.name;
    fn_.params = k.params;
    for (std::size_t p = 0; p < k.params.size(); ++p)
      param_index_[k.params[p].name] = static_cast<int>(p);
    for (const auto& s : k.body) {
      const int value = expr(*s.value);
      if (s.kind == StmtKind::kLet)
        lets_[s.name] = value;
      else
        emit({.op = Op::kStore, .a = address(s.name), .b = value});
    }
  }
  Function take() { return std::move(fn_); }

 private:
  int expr(const Expr& e) {
    switch (e.kind) {
      case ExprKind::kNumber:
        return emit({.op = Op::kConst, .imm = e.value});
      case ExprKind::kVar: {
        if (const auto it = lets_.find(e.name); it != lets_.end()) return it->second;
        return emit({.op = Op::kParam, .param = param_index_.at(e.name)});
      }
      case ExprKind::kIndex:
        return emit({.op = Op::kLoad, .a = address(e.name)});
      case ExprKind::kUnary:
        return emit({.op = Op::kNeg, .a = expr(*e.args[0])});
      case ExprKind::kBinary: {
        const int lhs = expr(*e.args[0]);
        const int rhs = expr(*e.args[1]);
        const Op op = e.op == '+'   ? Op::kAdd
                      : e.op == '-' ? Op::kSub
                      : e.op == '*' ? Op::kMul
                                    : Op::kDiv;
        return emit({.op = op, .a = lhs, .b = rhs});
      }
      case ExprKind::kCall: {
        const Intrinsic id = find_intrinsic(e.name)->id;
        const int x = expr(*e.args[0]);
        switch (id) {
          case Intrinsic::kMin:
            return emit({.op = Op::kMin, .a = x, .b = expr(*e.args[1])});
          case Intrinsic::kMax:
            return emit({.op = Op::kMax, .a = x, .b = expr(*e.args[1])});
          case Intrinsic::kRelu:
            return emit({.op = Op::kMax, .a = x, .b = emit({.op = Op::kConst, .imm = 0.0F})});
          case Intrinsic::kAbs:
            return emit({.op = Op::kAbs, .a = x});
          case Intrinsic::kSqrt:
            return emit({.op = Op::kSqrt, .a = x});
        }
      }
    }
    return kNone;
  }

  // &ptr[i] = cvta(ptr) + i*4, spelled out for every access; CSE shares them.
  int address(const std::string& pointer) {
    const int base = emit({.op = Op::kBase, .param = param_index_.at(pointer)});
    const int offset = emit({.op = Op::kOffset});
    return emit({.op = Op::kAddr, .a = base, .b = offset});
  }

  int emit(Inst inst) {
    fn_.insts.push_back(inst);
    return static_cast<int>(fn_.insts.size() - 1);
  }

  Function fn_;
  std::map<std::string, int, std::less<>> param_index_;
  std::map<std::string, int, std::less<>> lets_;
};

}  // namespace

Function lower(const Kernel& kernel) {
  return Lowering(kernel).take();
}

}  // namespace ptxc

namespace ptxc {

void rewrite_operands(Inst& inst, const std::vector<int>& repl) {
  int* ops[3] = {&inst.a, &inst.b, &inst.c};
  for (int k = 0; k < operand_count(inst); ++k) *ops[k] = repl[static_cast<std::size_t>(*ops[k])];
}

std::vector<int> identity_map(const Function& fn) {
  std::vector<int> repl(fn.insts.size());
  for (std::size_t v = 0; v < repl.size(); ++v) repl[v] = static_cast<int>(v);
  return repl;
}

}  // namespace ptxc
