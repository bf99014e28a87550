#include "execute.hpp"

#include <fmt/core.h>

#include <limits>

namespace simt {
namespace {

using Lanes = std::array<std::int64_t, kWarpSize>;

[[noreturn]] void fault(const Program& p, const Instruction& ins, const std::string& what) {
  throw SimtError(fmt::format("{}:{}: runtime error: {} (in '{}')", p.name, ins.line, what, ins.text));
}

// Wrapping 64-bit arithmetic: overflow in a simulated program is defined, not UB.
// (Passed to alu() wrapped in lambdas, so each instantiation inlines its operation.)
std::int64_t wrap_add(std::int64_t a, std::int64_t b) {
  return static_cast<std::int64_t>(static_cast<std::uint64_t>(a) + static_cast<std::uint64_t>(b));
}
std::int64_t wrap_sub(std::int64_t a, std::int64_t b) {
  return static_cast<std::int64_t>(static_cast<std::uint64_t>(a) - static_cast<std::uint64_t>(b));
}
std::int64_t wrap_mul(std::int64_t a, std::int64_t b) {
  return static_cast<std::int64_t>(static_cast<std::uint64_t>(a) * static_cast<std::uint64_t>(b));
}

bool lane_on(LaneMask m, int lane) { return (m >> lane) & 1u; }

// dst[l] = f(a[l], b[l]) for the lanes in `write`; b is the register or the
// immediate. Computing all 32 lanes into a temporary and then blending keeps
// the loops branch-free (vectorizable) and makes rd == ra/rb aliasing safe.
template <class F>
void alu(Warp& w, const Instruction& ins, LaneMask write, F f) {
  Lanes result;
  const Lanes& a = w.regs[ins.ra];
  if (ins.b_is_imm) {
    for (std::size_t l = 0; l < kWarpSize; ++l) result[l] = f(a[l], ins.imm);
  } else {
    const Lanes& b = w.regs[ins.rb];
    for (std::size_t l = 0; l < kWarpSize; ++l) result[l] = f(a[l], b[l]);
  }
  Lanes& dst = w.regs[ins.rd];
  if (write == kFullMask) {
    dst = result;
    return;
  }
  for (std::size_t l = 0; l < kWarpSize; ++l)
    if (lane_on(write, static_cast<int>(l))) dst[l] = result[l];
}

void check_address(const Program& p, const Instruction& ins, std::int64_t addr, std::size_t size, int lane, const char* what) {
  if (addr < 0 || static_cast<std::uint64_t>(addr) >= size)
    fault(p, ins, fmt::format("{} address {} out of range [0, {}) in lane {}", what, addr, size, lane));
}

// A control transfer to `target` that leaves the innermost divergent region
// backwards would make lanes loop a different number of times: per-lane trip
// counts need per-thread PCs, which this (pre-Volta) machine does not have.
void check_backward(const Program& p, const Instruction& ins, const Warp& w, std::uint32_t target) {
  if (!w.stack.empty() && target <= w.stack.top().branch_pc)
    fault(p, ins, fmt::format("divergent backward branch to instruction {} leaves the divergent region of line {}; "
                              "make the loop condition warp-uniform", target, p.code[w.stack.top().branch_pc].line));
}

}  // namespace

std::uint64_t execute(Warp& w, const Program& program, std::vector<std::int64_t>& mem, const Config& config) {
  const Instruction& ins = program.code[w.pc];
  const Pitfalls& bug = config.pitfalls;
  // Masks gate writes, never reads. The unmasked-writes bug lets every lane commit.
  const LaneMask write = bug.unmasked_writes ? kFullMask : w.mask;
  std::uint32_t next_pc = w.pc + 1;
  std::uint64_t busy = 1;

  switch (ins.op) {
    case Opcode::kTid:
      for (int l = 0; l < kWarpSize; ++l)
        if (lane_on(write, l)) w.regs[ins.rd][static_cast<std::size_t>(l)] = w.id * kWarpSize + l;
      break;
    case Opcode::kLi:
      for (int l = 0; l < kWarpSize; ++l)
        if (lane_on(write, l)) w.regs[ins.rd][static_cast<std::size_t>(l)] = ins.imm;
      break;
    case Opcode::kAdd: alu(w, ins, write, [](std::int64_t a, std::int64_t b) { return wrap_add(a, b); }); break;
    case Opcode::kSub: alu(w, ins, write, [](std::int64_t a, std::int64_t b) { return wrap_sub(a, b); }); break;
    case Opcode::kMul: alu(w, ins, write, [](std::int64_t a, std::int64_t b) { return wrap_mul(a, b); }); break;
    case Opcode::kMod: {
      for (int l = 0; l < kWarpSize; ++l) {
        const auto b = ins.b_is_imm ? ins.imm : w.reg(ins.rb, l);
        if (lane_on(write, l) && b == 0) fault(program, ins, fmt::format("MOD by zero in lane {}", l));
      }
      alu(w, ins, write, [](std::int64_t a, std::int64_t b) -> std::int64_t {
        // Inactive lanes are computed too (and discarded): give them a defined result.
        if (b == 0 || b == -1) return 0;  // INT64_MIN % -1 overflows in C++; the remainder is 0 anyway
        return a % b;
      });
      break;
    }
    case Opcode::kSeq: alu(w, ins, write, [](std::int64_t a, std::int64_t b) -> std::int64_t { return a == b; }); break;
    case Opcode::kSlt: alu(w, ins, write, [](std::int64_t a, std::int64_t b) -> std::int64_t { return a < b; }); break;
    case Opcode::kSelp: {
      const Lanes a = w.regs[ins.ra], b = w.regs[ins.rb], p = w.regs[ins.rp];
      for (std::size_t l = 0; l < kWarpSize; ++l)
        if (lane_on(write, static_cast<int>(l))) w.regs[ins.rd][l] = p[l] != 0 ? a[l] : b[l];
      break;
    }
    case Opcode::kVoteAny: {
      // One issue: the active lanes' predicate bits are OR-ed inside the warp,
      // with no memory traffic. Inactive lanes do not vote.
      bool any = false;
      for (int l = 0; l < kWarpSize; ++l) any |= lane_on(w.mask, l) && w.reg(ins.ra, l) != 0;
      for (int l = 0; l < kWarpSize; ++l)
        if (lane_on(write, l)) w.regs[ins.rd][static_cast<std::size_t>(l)] = any;
      break;
    }
    case Opcode::kLd: {
      for (int l = 0; l < kWarpSize; ++l) {
        if (!lane_on(write, l)) continue;
        const auto addr = w.reg(ins.ra, l);
        check_address(program, ins, addr, mem.size(), l, "LD");
        w.regs[ins.rd][static_cast<std::size_t>(l)] = mem[static_cast<std::size_t>(addr)];
      }
      ++w.loads;
      busy = 1 + static_cast<std::uint64_t>(config.load_latency);
      break;
    }
    case Opcode::kSt: {
      for (int l = 0; l < kWarpSize; ++l) {  // on an address conflict the highest lane wins
        if (!lane_on(write, l)) continue;
        const auto addr = w.reg(ins.ra, l);
        check_address(program, ins, addr, mem.size(), l, "ST");
        mem[static_cast<std::size_t>(addr)] = w.reg(ins.rb, l);
      }
      break;
    }
    case Opcode::kBrz: {
      LaneMask zero = 0;  // lanes whose predicate is zero take the branch (branch-free loop)
      const Lanes& pred = w.regs[ins.ra];
      for (std::size_t l = 0; l < kWarpSize; ++l) zero |= static_cast<LaneMask>(pred[l] == 0) << l;
      const LaneMask taken = zero & w.mask;
      if (taken == w.mask) {  // uniform: everyone jumps, nothing to remember
        check_backward(program, ins, w, ins.target);
        next_pc = ins.target;
      } else if (taken != 0) {  // divergent: remember the taken lanes, run the fall-through first
        if (ins.target <= w.pc)
          fault(program, ins, "divergent backward branch: lanes disagree on a loop condition; make it warp-uniform");
        const std::uint32_t join = bug.reconverge_at_target ? ins.target : ins.join;
        w.stack.push({join, w.pc, w.mask, taken, ins.target, true});
        w.mask &= ~taken;
      }
      break;
    }
    case Opcode::kJmp:
      if (bug.jmp_reconverges && !w.stack.empty()) {
        // The bug: treating the jump to the join as the join itself. The
        // saved mask comes back and the taken path is silently dropped.
        w.mask = w.stack.top().saved_mask;
        w.stack.pop();
      } else {
        check_backward(program, ins, w, ins.target);
      }
      next_pc = ins.target;
      break;
    case Opcode::kReconv:
      // Only the join named by the innermost entry acts; any other RECONV is a
      // no-op (but still an issue).
      if (!w.stack.empty() && w.stack.top().join_pc == w.pc) {
        StackEntry& top = w.stack.top();
        if (top.taken_pending) {
          top.taken_pending = false;
          w.mask = top.taken_mask;
          next_pc = top.taken_pc;  // may be this very RECONV: it then issues again for the taken lanes
        } else {
          w.mask = top.saved_mask;
          w.stack.pop();
          // Two regions can share a join; the outer one is handled by issuing this RECONV again.
          if (!w.stack.empty() && w.stack.top().join_pc == w.pc) next_pc = w.pc;
        }
      }
      break;
  }
  w.pc = next_pc;
  return busy;
}

}  // namespace simt
