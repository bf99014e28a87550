#include "ptxc/ptx_emitter.hpp"

#include <fmt/format.h>

#include <bit>
#include <map>
#include <stdexcept>

namespace ptxc {

std::string ptx_version_for(const std::string& target) {
  static const std::map<std::string, std::string, std::less<>> kVersions = {
      {"sm_75", "7.0"},  {"sm_80", "7.0"},  {"sm_86", "7.1"},  {"sm_87", "7.4"},
      {"sm_89", "7.8"},  {"sm_90", "7.8"},  {"sm_100", "8.6"}, {"sm_103", "8.8"},
      {"sm_110", "9.0"}, {"sm_120", "8.7"}, {"sm_121", "8.8"},
  };
  const auto it = kVersions.find(target);
  if (it == kVersions.end())
    throw std::invalid_argument(
        fmt::format("unknown target '{}' (known: sm_75 sm_80 sm_86 sm_87 sm_89 sm_90 sm_100 sm_103 "
                    "sm_110 sm_120 sm_121)",
                    target));
  return it->second;
}

std::string f32_hex(float value) {
  return fmt::format("0f{:08X}", std::bit_cast<std::uint32_t>(value));
}

namespace {

// Fixed registers of every kernel, numbered like the curriculum's listing:
// %r1..%r3 the special registers, %r4 the index i, %r5 the hidden n, %p1 the guard.
constexpr std::string_view kIndexReg = "%r4";
constexpr std::string_view kCountReg = "%r5";

class EntryEmitter {
 public:
  EntryEmitter(const Function& fn, const EmitOptions& opts)
      : fn_(fn), opts_(opts), reg_(fn.insts.size()) {}

  std::string run() {
    const std::string body = body_text();  // numbers the registers first
    std::string out = fmt::format(".visible .entry {}(\n", fn_.name);
    for (std::size_t p = 0; p < fn_.params.size(); ++p) {
      const bool ptr = fn_.params[p].type == Type::kF32Ptr;
      out += fmt::format("\t.param .{} {}_param_{},\t// {}\n", ptr ? "u64" : "f32", fn_.name, p,
                         fn_.params[p].name);
    }
    out += fmt::format("\t.param .u32 {}_param_{}\t// n (hidden)\n)\n{{\n", fn_.name,
                       fn_.params.size());
    out += fmt::format(
        "\t.reg .pred \t%p<2>;\n\t.reg .f32 \t%f<{}>;\n\t.reg .b32 \t%r<6>;\n\t.reg .b64 "
        "\t%rd<{}>;\n\n",
        next_f_, next_rd_);
    out += prologue_;
    out += body;
    out += "DONE:\n\tret;\n}\n";
    return out;
  }

 private:
  std::string body_text() {
    // Prologue: one ld.param per parameter the body reads (the kernel ABI).
    std::vector<std::string> param_reg(fn_.params.size());
    for (const Inst& in : fn_.insts) {
      if (in.op != Op::kParam && in.op != Op::kBase) continue;
      const auto p = static_cast<std::size_t>(in.param);
      if (!param_reg[p].empty()) continue;
      const bool ptr = fn_.params[p].type == Type::kF32Ptr;
      param_reg[p] = ptr ? rd() : f();
      line(prologue_, fmt::format("ld.param.{}", ptr ? "u64" : "f32"),
           fmt::format("{}, [{}_param_{}]", param_reg[p], fn_.name, p));
    }
    line(prologue_, "ld.param.u32",
         fmt::format("{}, [{}_param_{}]", kCountReg, fn_.name, fn_.params.size()));
    line(prologue_, "mov.u32", "%r1, %ctaid.x");
    line(prologue_, "mov.u32", "%r2, %ntid.x");
    line(prologue_, "mov.u32", "%r3, %tid.x");
    line(prologue_, "mad.lo.s32", fmt::format("{}, %r1, %r2, %r3", kIndexReg));
    if (opts_.guard) {
      line(prologue_, "setp.ge.s32", fmt::format("%p1, {}, {}", kIndexReg, kCountReg));
      line(prologue_, "@%p1 bra", "DONE");
    }
    prologue_ += "\n";

    std::string out;
    for (std::size_t v = 0; v < fn_.insts.size(); ++v) {
      const Inst& in = fn_.insts[v];
      std::string& d = reg_[v];
      switch (in.op) {
        case Op::kConst:
          if (opts_.inline_immediates) {
            d = f32_hex(in.imm);
          } else {
            d = f();
            line(out, "mov.f32", fmt::format("{}, {}", d, f32_hex(in.imm)));
          }
          break;
        case Op::kParam:
          d = param_reg[static_cast<std::size_t>(in.param)];
          break;
        case Op::kBase:
          d = rd();
          line(out, "cvta.to.global.u64",
               fmt::format("{}, {}", d, param_reg[static_cast<std::size_t>(in.param)]));
          break;
        case Op::kOffset:
          d = rd();
          line(out, "mul.wide.s32", fmt::format("{}, {}, 4", d, kIndexReg));
          break;
        case Op::kAddr:
          d = rd();
          line(out, "add.s64", fmt::format("{}, {}, {}", d, operand(in.a), operand(in.b)));
          break;
        case Op::kLoad:
          d = f();
          line(out, "ld.global.f32", fmt::format("{}, [{}]", d, operand(in.a)));
          break;
        case Op::kStore:
          line(out, "st.global.f32", fmt::format("[{}], {}", operand(in.a), operand(in.b)));
          break;
        default: {
          d = f();
          std::string args = fmt::format("{}, {}", d, operand(in.a));
          if (operand_count(in) > 1) args += ", " + operand(in.b);
          if (operand_count(in) > 2) args += ", " + operand(in.c);
          line(out, std::string(arith_opcode(in.op)), args);
        }
      }
    }
    return out;
  }

  // Explicit .rn everywhere a rounding can be chosen: without it ptxas may
  // contract a mul/add pair into an FMA on its own, and then the GPU would
  // disagree with the interpreter in the last bit.
  static std::string_view arith_opcode(Op op) {
    switch (op) {
      case Op::kAdd:
        return "add.rn.f32";
      case Op::kSub:
        return "sub.rn.f32";
      case Op::kMul:
        return "mul.rn.f32";
      case Op::kDiv:
        return "div.rn.f32";
      case Op::kFma:
        return "fma.rn.f32";
      case Op::kNeg:
        return "neg.f32";
      case Op::kAbs:
        return "abs.f32";
      case Op::kSqrt:
        return "sqrt.rn.f32";
      case Op::kMin:
        return "min.f32";
      case Op::kMax:
        return "max.f32";
      default:
        return "?";
    }
  }

  const std::string& operand(int v) const { return reg_[static_cast<std::size_t>(v)]; }
  static void line(std::string& out, std::string_view opcode, std::string_view args) {
    out += fmt::format("\t{} \t{};\n", opcode, args);
  }
  std::string f() { return fmt::format("%f{}", next_f_++); }
  std::string rd() { return fmt::format("%rd{}", next_rd_++); }

  const Function& fn_;
  const EmitOptions& opts_;
  std::vector<std::string> reg_;  // the register (or immediate) holding each IR value
  std::string prologue_;
  int next_f_ = 1;
  int next_rd_ = 1;
};

}  // namespace

std::string emit_ptx_entry(const Function& fn, const EmitOptions& opts) {
  return EntryEmitter(fn, opts).run();
}

std::string emit_ptx(const std::vector<Function>& fns, const EmitOptions& opts) {
  std::string out = fmt::format(
      "//\n// Generated by ptxc (gpulab p03-ptxc)\n//\n\n.version {}\n.target {}\n.address_size "
      "64\n",
      ptx_version_for(opts.target), opts.target);
  for (const auto& fn : fns) out += "\n" + emit_ptx_entry(fn, opts);
  return out;
}

}  // namespace ptxc
