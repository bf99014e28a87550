#include "ptxc/ptx_interpreter.hpp"

#include <fmt/format.h>

#include <bit>
#include <cmath>

namespace ptxc {

namespace {

using ptx::Cmp;
using ptx::DType;
using ptx::Opcode;
using ptx::Operand;

struct Thread {
  std::vector<std::uint64_t> regs;
  int tid = 0, ntid = 1, ctaid = 0, nctaid = 1;
};

bool is_64(DType t) {
  return t == DType::kS64 || t == DType::kU64 || t == DType::kB64;
}

// Registers hold raw bits; 32-bit values live in the low half, zero-extended.
std::uint64_t truncate(std::uint64_t v, DType t) {
  return is_64(t) ? v : (v & 0xffffffffULL);
}
float as_f32(std::uint64_t v) {
  return std::bit_cast<float>(static_cast<std::uint32_t>(v));
}
std::uint64_t from_f32(float f) {
  return std::bit_cast<std::uint32_t>(f);
}
std::int64_t as_signed(std::uint64_t v, DType t) {
  if (t == DType::kS32) return static_cast<std::int32_t>(static_cast<std::uint32_t>(v));
  return static_cast<std::int64_t>(v);
}

class Executor {
 public:
  Executor(const ptx::Entry& e, const std::vector<std::uint64_t>& params, GlobalMemory& mem)
      : entry_(e), params_(params), mem_(mem) {}

  std::uint64_t run(Thread& t) {
    std::uint64_t steps = 0;
    std::size_t pc = 0;
    while (pc < entry_.body.size()) {
      if (++steps > kMaxStepsPerThread)
        throw ExecError(
            fmt::format("exceeded {} instructions (a loop that never ends?)", kMaxStepsPerThread));
      const ptx::Instruction& in = entry_.body[pc++];
      if (in.guard >= 0 && ((t.regs[static_cast<std::size_t>(in.guard)] != 0) == in.guard_negated))
        continue;
      switch (in.op) {
        case Opcode::kRet:
          return steps;
        case Opcode::kBra:
          pc = static_cast<std::size_t>(in.ops[0].index);
          break;
        default:
          execute(in, t);
      }
    }
    return steps;
  }

 private:
  // The value of a source operand as raw bits of the instruction's type.
  std::uint64_t read(const Operand& op, DType type, const Thread& t) const {
    switch (op.kind) {
      case Operand::Kind::kReg:
        return truncate(t.regs[static_cast<std::size_t>(op.reg)], type);
      case Operand::Kind::kImmF32:
        return type == DType::kF32
                   ? from_f32(op.fimm)
                   : truncate(static_cast<std::uint64_t>(static_cast<std::int64_t>(op.fimm)), type);
      case Operand::Kind::kImmInt:
        return type == DType::kF32 ? from_f32(static_cast<float>(op.imm))
                                   : truncate(static_cast<std::uint64_t>(op.imm), type);
      case Operand::Kind::kSpecial: {
        const int x = op.special == ptx::Special::kTid     ? t.tid
                      : op.special == ptx::Special::kNtid  ? t.ntid
                      : op.special == ptx::Special::kCtaid ? t.ctaid
                                                           : t.nctaid;
        // A 1-D launch: .y and .z are 0 for indices and 1 for sizes.
        const bool size = op.special == ptx::Special::kNtid || op.special == ptx::Special::kNctaid;
        return static_cast<std::uint64_t>(op.dim == 0 ? x : (size ? 1 : 0));
      }
      default:
        return 0;  // rejected by the parser
    }
  }

  static void write(Thread& t, const Operand& d, DType type, std::uint64_t v) {
    t.regs[static_cast<std::size_t>(d.reg)] = truncate(v, type);
  }

  std::uint64_t address(const Operand& mem, const Thread& t) const {
    return t.regs[static_cast<std::size_t>(mem.reg)] + static_cast<std::uint64_t>(mem.imm);
  }

  void execute(const ptx::Instruction& in, Thread& t) {
    const DType ty = in.type;
    const auto src = [&](std::size_t k) { return read(in.ops[k], ty, t); };
    const auto f = [&](std::size_t k) { return as_f32(src(k)); };
    const Operand& d = in.ops[0];
    switch (in.op) {
      case Opcode::kLdParam: {
        const auto p = static_cast<std::size_t>(in.ops[1].index);
        if (p >= params_.size())
          throw ExecError(fmt::format("parameter {} was not supplied", entry_.params[p].name));
        write(t, d, ty, params_[p]);
        return;
      }
      case Opcode::kLdGlobal:
        write(t, d, ty, mem_.load32(address(in.ops[1], t)));
        return;
      case Opcode::kStGlobal:
        mem_.store32(address(in.ops[0], t), static_cast<std::uint32_t>(read(in.ops[1], ty, t)));
        return;
      case Opcode::kCvtaToGlobal:  // one flat address space: generic == global
      case Opcode::kMov:
        write(t, d, ty, src(1));
        return;
      case Opcode::kCvt: {
        const std::uint64_t v = read(in.ops[1], in.src_type, t);
        write(
            t, d, ty,
            in.src_type == DType::kS32 ? static_cast<std::uint64_t>(as_signed(v, DType::kS32)) : v);
        return;
      }
      case Opcode::kMulWide: {
        const DType narrow = ty == DType::kS32 ? DType::kS32 : DType::kU32;
        const std::uint64_t a = read(in.ops[1], narrow, t);
        const std::uint64_t b = read(in.ops[2], narrow, t);
        const std::uint64_t r =
            ty == DType::kS32
                ? static_cast<std::uint64_t>(as_signed(a, DType::kS32) * as_signed(b, DType::kS32))
                : a * b;
        t.regs[static_cast<std::size_t>(d.reg)] = r;  // the wide result is 64 bits
        return;
      }
      case Opcode::kMad:
        write(t, d, ty, src(1) * src(2) + src(3));
        return;  // .lo: wraps like the hardware
      case Opcode::kMulLo:
        write(t, d, ty, src(1) * src(2));
        return;
      case Opcode::kShl:
        write(t, d, ty, src(2) >= 64 ? 0 : src(1) << src(2));
        return;
      case Opcode::kSetp:
        write(t, d, DType::kPred, compare(in, t) ? 1 : 0);
        return;
      case Opcode::kSelp:
        write(t, d, ty, read(in.ops[3], DType::kPred, t) != 0 ? src(1) : src(2));
        return;
      default:
        break;
    }
    if (ty == DType::kF32) {
      float r = 0.0F;
      switch (in.op) {
        case Opcode::kAdd:
          r = f(1) + f(2);
          break;
        case Opcode::kSub:
          r = f(1) - f(2);
          break;
        case Opcode::kMul:
          r = f(1) * f(2);
          break;
        case Opcode::kDiv:
          r = f(1) / f(2);
          break;
        case Opcode::kFma:
          r = std::fma(f(1), f(2), f(3));
          break;
        case Opcode::kNeg:
          r = -f(1);
          break;
        case Opcode::kAbs:
          r = std::fabs(f(1));
          break;
        case Opcode::kSqrt:
          r = std::sqrt(f(1));
          break;
        case Opcode::kMin:
          r = std::fmin(f(1), f(2));
          break;  // PTX min/max: NaN loses, like fminf
        case Opcode::kMax:
          r = std::fmax(f(1), f(2));
          break;
        default:
          throw ExecError(
              fmt::format("line {}: '{}' has no f32 form here", in.line, in.opcode_text));
      }
      write(t, d, ty, from_f32(r));
      return;
    }
    const bool sign = ty == DType::kS32 || ty == DType::kS64;
    const std::int64_t a = as_signed(src(1), ty);
    switch (in.op) {
      case Opcode::kAdd:
        write(t, d, ty, src(1) + src(2));
        return;
      case Opcode::kSub:
        write(t, d, ty, src(1) - src(2));
        return;
      case Opcode::kNeg:
        write(t, d, ty, 0 - src(1));
        return;
      case Opcode::kAbs:
        write(t, d, ty, a < 0 ? 0 - static_cast<std::uint64_t>(a) : static_cast<std::uint64_t>(a));
        return;
      case Opcode::kMin:
      case Opcode::kMax: {
        const std::int64_t b = as_signed(src(2), ty);
        const bool less = sign ? a < b : src(1) < src(2);
        write(t, d, ty, (in.op == Opcode::kMin) == less ? src(1) : src(2));
        return;
      }
      default:
        throw ExecError(
            fmt::format("line {}: '{}' is not supported on integers", in.line, in.opcode_text));
    }
  }

  bool compare(const ptx::Instruction& in, const Thread& t) const {
    const DType ty = in.type;
    if (ty == DType::kF32) {
      const float a = as_f32(read(in.ops[1], ty, t));
      const float b = as_f32(read(in.ops[2], ty, t));
      switch (in.cmp) {  // ordered comparisons: false when either is NaN
        case Cmp::kEq:
          return a == b;
        case Cmp::kNe:
          return !std::isnan(a) && !std::isnan(b) && a != b;
        case Cmp::kLt:
          return a < b;
        case Cmp::kLe:
          return a <= b;
        case Cmp::kGt:
          return a > b;
        case Cmp::kGe:
          return a >= b;
      }
    }
    const std::uint64_t ua = read(in.ops[1], ty, t);
    const std::uint64_t ub = read(in.ops[2], ty, t);
    const bool sign = ty == DType::kS32 || ty == DType::kS64;
    const std::int64_t sa = as_signed(ua, ty);
    const std::int64_t sb = as_signed(ub, ty);
    switch (in.cmp) {
      case Cmp::kEq:
        return ua == ub;
      case Cmp::kNe:
        return ua != ub;
      case Cmp::kLt:
        return sign ? sa < sb : ua < ub;
      case Cmp::kLe:
        return sign ? sa <= sb : ua <= ub;
      case Cmp::kGt:
        return sign ? sa > sb : ua > ub;
      case Cmp::kGe:
        return sign ? sa >= sb : ua >= ub;
    }
    return false;
  }

  const ptx::Entry& entry_;
  const std::vector<std::uint64_t>& params_;
  GlobalMemory& mem_;
};

}  // namespace

LaunchStats launch(const ptx::Entry& entry, const std::vector<std::uint64_t>& params,
                   LaunchConfig config, GlobalMemory& memory) {
  if (config.grid < 1 || config.block < 1) throw ExecError("grid and block must be at least 1");
  if (params.size() != entry.params.size())
    throw ExecError(fmt::format("entry '{}' takes {} parameters, {} given", entry.name,
                                entry.params.size(), params.size()));
  Executor exec(entry, params, memory);
  LaunchStats stats;
  Thread t;
  t.ntid = config.block;
  t.nctaid = config.grid;
  for (int b = 0; b < config.grid; ++b) {
    for (int x = 0; x < config.block; ++x) {
      t.regs.assign(entry.registers.size(), 0);
      t.ctaid = b;
      t.tid = x;
      const long long global = static_cast<long long>(b) * config.block + x;
      try {
        stats.instructions += exec.run(t);
      } catch (MemoryFault& fault) {
        MemoryFault named(
            fmt::format("thread {} (block {}, thread {}): {}", global, b, x, fault.what()),
            fault.address);
        named.thread = global;
        throw named;
      } catch (const ExecError& e) {
        throw ExecError(fmt::format("thread {} (block {}, thread {}): {}", global, b, x, e.what()));
      }
      ++stats.threads;
    }
  }
  return stats;
}

}  // namespace ptxc
