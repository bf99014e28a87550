#include "execute.hpp"

#include <fmt/core.h>

#include <array>
#include <bit>
#include <cstring>

namespace simt {
namespace {

using Lanes = std::array<std::int64_t, kWarpSize>;

[[noreturn, gnu::cold]] void fault(const Program& p, const Instruction& ins, const std::string& what) {
  throw SimtError(fmt::format("{}:{}: runtime error: {} (in '{}')", p.name, ins.line, what, ins.text));
}

// Inactive lanes are computed too (and discarded): give them a defined result.
std::int64_t safe_mod(std::int64_t a, std::int64_t b) {
  if (b == 0 || b == -1) return 0;  // INT64_MIN % -1 overflows in C++; the remainder is 0 anyway
  return a % b;
}

bool lane_on(LaneMask m, int lane) { return (m >> lane) & 1u; }

// Four lanes as one GCC vector: AVX2 handles it in one instruction, the
// baseline x86-64 in two SSE2 ones. Unsigned, so wrapping is defined.
using V = std::uint64_t __attribute__((vector_size(32)));
using VS = std::int64_t __attribute__((vector_size(32)));
constexpr std::size_t kPerV = 4;
constexpr std::size_t kChunks = kWarpSize / kPerV;

V load(const std::int64_t* p) {
  V v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
void store(std::int64_t* p, V v) { std::memcpy(p, &v, sizeof v); }

// Masked writes as a blend: every lane's new value is computed branch-free,
// then kept where the lane's all-ones select word says so. The select words
// are rebuilt only when the write mask changes, which in a divergent region is
// once per path, not once per instruction. Each chunk of four lanes is read
// whole before its result is stored, so rd may be ra or rb. A mask of a few
// lanes (a case body of a switch, where each lane takes its own case) skips
// the blend: only those lanes' words are computed and stored.
class Blend {
 public:
  template <class F>
  [[gnu::always_inline]] void write(Lanes& dst, LaneMask mask, F lanes) {
    if (mask == kFullMask) {
      for (std::size_t c = 0; c < kChunks; ++c) store(&dst[c * kPerV], lanes(c));
      return;
    }
    if (mask != mask_) rebuild(mask);
    if (sparse_) {
      // Lanes are independent (a lane's result reads only that lane of its
      // sources), so storing one lane cannot change the next one's value.
      for (LaneMask m = mask; m != 0; m &= m - 1) {
        const auto l = static_cast<std::size_t>(std::countr_zero(m));
        dst[l] = static_cast<std::int64_t>(lanes(l / kPerV)[l % kPerV]);
      }
      return;
    }
    for (std::size_t c = 0; c < kChunks; ++c) {
      const V keep = select_[c];
      store(&dst[c * kPerV], (lanes(c) & keep) | (load(&dst[c * kPerV]) & ~keep));
    }
  }

 private:
  static constexpr int kSparseLanes = 4;
  // The 16 four-lane select patterns: rebuilding is one load per chunk.
  static constexpr std::array<std::array<std::uint64_t, kPerV>, 16> kNibbles = [] {
    std::array<std::array<std::uint64_t, kPerV>, 16> t{};
    for (std::size_t n = 0; n < 16; ++n)
      for (std::size_t l = 0; l < kPerV; ++l) t[n][l] = (n >> l) & 1 ? ~std::uint64_t{0} : 0;
    return t;
  }();
  void rebuild(LaneMask mask) {
    mask_ = mask;
    LaneMask rest = mask;  // clear the lowest kSparseLanes lanes: none left means sparse
    for (int i = 0; i < kSparseLanes; ++i) rest &= rest - 1;
    sparse_ = rest == 0;
    if (sparse_) return;
    for (std::size_t c = 0; c < kChunks; ++c)
      std::memcpy(&select_[c], kNibbles[(mask >> (c * kPerV)) & 15].data(), sizeof(V));
  }
  LaneMask mask_ = kFullMask;
  bool sparse_ = false;
  std::array<V, kChunks> select_{};
};

// Lanes whose value is zero, as a mask (BRZ's and VOTE_ANY's predicate): each
// chunk's compare gives all-ones lanes, and one shift per chunk moves its
// four bits to their lane positions (a compare, an and, a shift and an or per
// four lanes, instead of a compare and a shift per lane).
LaneMask zero_lanes(const Lanes& v) {
  V bits{};
  for (std::size_t c = 0; c < kChunks; ++c)
    bits |= (reinterpret_cast<V>(load(&v[c * kPerV]) == 0) & V{1, 2, 4, 8}) << (c * kPerV);
  return static_cast<LaneMask>(bits[0] | bits[1] | bits[2] | bits[3]);
}

template <class F>
[[gnu::always_inline]] inline void alu_r(Warp& w, const DecodedOp& op, LaneMask write, Blend& blend, F f) {
  const std::int64_t* a = w.regs[op.ra].data();
  const std::int64_t* b = w.regs[op.rb].data();
  blend.write(w.regs[op.rd], write, [&](std::size_t c) { return f(load(a + c * kPerV), load(b + c * kPerV)); });
}

template <class F>
[[gnu::always_inline]] inline void alu_i(Warp& w, const DecodedOp& op, LaneMask write, Blend& blend, F f) {
  const std::int64_t* a = w.regs[op.ra].data();
  const V b = V{} + static_cast<std::uint64_t>(op.imm);
  blend.write(w.regs[op.rd], write, [&](std::size_t c) { return f(load(a + c * kPerV), b); });
}

void check_address(const Program& p, const Instruction& ins, std::int64_t addr, std::size_t size, int lane,
                   const char* what) {
  if (addr < 0 || static_cast<std::uint64_t>(addr) >= size) [[unlikely]]
    fault(p, ins, fmt::format("{} address {} out of range [0, {}) in lane {}", what, addr, size, lane));
}

// A control transfer to `target` that leaves the innermost divergent region
// backwards would make lanes loop a different number of times: per-lane trip
// counts need per-thread PCs, which this (pre-Volta) machine does not have.
void check_backward(const Program& p, const Instruction& ins, const Warp& w, std::uint32_t target) {
  if (!w.stack.empty() && target <= w.stack.top().branch_pc) [[unlikely]]
    fault(p, ins, fmt::format("divergent backward branch to instruction {} leaves the divergent region of line {}; "
                              "make the loop condition warp-uniform", target, p.code[w.stack.top().branch_pc].line));
}

// What an issue reads besides the warp, copied out of RunState once per
// slice: held in locals, they cannot alias the lanes and words the issue
// stores (int64 stores may alias the uint64 fields of Config and RunStats, so
// reading them through references reloaded them on every issue).
struct Hot {
  const Program& program;  // for fault messages
  const DecodedOp* code;
  std::int64_t* mem;
  std::size_t mem_words;
  std::uint64_t load_busy;  // 1 + load latency
  Pitfalls bug;
};

// Executes w.pc's instruction with w.mask, updates pc/mask/stack, and returns
// the cycles before the warp may issue again (1, or 1 + load latency after LD).
[[gnu::always_inline]] inline std::uint64_t execute(Warp& w, const Hot& run, Blend& blend) {
  const DecodedOp& op = run.code[w.pc];
  const Pitfalls& bug = run.bug;
  // Masks gate writes, never reads. The unmasked-writes bug lets every lane commit.
  const LaneMask write = bug.unmasked_writes ? kFullMask : w.mask;
  std::uint32_t next_pc = w.pc + 1;
  std::uint64_t busy = 1;
  const auto add = [](V a, V b) { return a + b; };
  const auto sub = [](V a, V b) { return a - b; };
  const auto mul = [](V a, V b) { return a * b; };
  const auto seq = [](V a, V b) { return reinterpret_cast<V>(a == b) & 1; };
  const auto slt = [](V a, V b) { return reinterpret_cast<V>(reinterpret_cast<VS>(a) < reinterpret_cast<VS>(b)) & 1; };
  // MOD lane by lane: there is no vector division.
  const auto mod = [](V a, V b) {
    V r;
    for (std::size_t l = 0; l < kPerV; ++l)
      r[l] = static_cast<std::uint64_t>(safe_mod(static_cast<std::int64_t>(a[l]), static_cast<std::int64_t>(b[l])));
    return r;
  };

  switch (op.kind) {
    case Kind::kTid: {
      const V base = V{} + static_cast<std::uint64_t>(w.id) * kWarpSize;
      blend.write(w.regs[op.rd], write, [&](std::size_t c) { return base + c * kPerV + V{0, 1, 2, 3}; });
      break;
    }
    case Kind::kLi: {
      const V v = V{} + static_cast<std::uint64_t>(op.imm);
      blend.write(w.regs[op.rd], write, [&](std::size_t) { return v; });
      break;
    }
    case Kind::kAddR: alu_r(w, op, write, blend, add); break;
    case Kind::kAddI: alu_i(w, op, write, blend, add); break;
    case Kind::kSubR: alu_r(w, op, write, blend, sub); break;
    case Kind::kSubI: alu_i(w, op, write, blend, sub); break;
    case Kind::kMulR: alu_r(w, op, write, blend, mul); break;
    case Kind::kMulI: alu_i(w, op, write, blend, mul); break;
    case Kind::kSeqR: alu_r(w, op, write, blend, seq); break;
    case Kind::kSeqI: alu_i(w, op, write, blend, seq); break;
    case Kind::kSltR: alu_r(w, op, write, blend, slt); break;
    case Kind::kSltI: alu_i(w, op, write, blend, slt); break;
    case Kind::kModR:
    case Kind::kModI: {
      const bool imm = op.kind == Kind::kModI;
      for (int l = 0; l < kWarpSize; ++l) {
        const auto b = imm ? op.imm : w.reg(op.rb, l);
        if (lane_on(write, l) && b == 0)
          fault(run.program, run.program.code[w.pc], fmt::format("MOD by zero in lane {}", l));
      }
      if (imm) {
        alu_i(w, op, write, blend, mod);
      } else {
        alu_r(w, op, write, blend, mod);
      }
      break;
    }
    case Kind::kSelp: {
      const std::int64_t* a = w.regs[op.ra].data();
      const std::int64_t* b = w.regs[op.rb].data();
      const std::int64_t* p = w.regs[op.rp].data();
      blend.write(w.regs[op.rd], write, [&](std::size_t c) {
        const V on = reinterpret_cast<V>(load(p + c * kPerV) != 0);
        return (load(a + c * kPerV) & on) | (load(b + c * kPerV) & ~on);
      });
      break;
    }
    case Kind::kVoteAny: {
      // One issue: the active lanes' predicate bits are OR-ed inside the warp,
      // with no memory traffic. Inactive lanes do not vote.
      const V any = V{} + std::uint64_t{(~zero_lanes(w.regs[op.ra]) & w.mask) != 0};
      blend.write(w.regs[op.rd], write, [&](std::size_t) { return any; });
      break;
    }
    case Kind::kLd: {
      // Only the writing lanes, lowest first (a fault names the lowest bad lane).
      for (LaneMask m = write; m != 0; m &= m - 1) {
        const int l = std::countr_zero(m);
        const auto addr = w.reg(op.ra, l);
        check_address(run.program, run.program.code[w.pc], addr, run.mem_words, l, "LD");
        w.regs[op.rd][static_cast<std::size_t>(l)] = run.mem[static_cast<std::size_t>(addr)];
      }
      ++w.loads;
      busy = run.load_busy;
      break;
    }
    case Kind::kSt: {
      for (LaneMask m = write; m != 0; m &= m - 1) {  // on an address conflict the highest lane wins
        const int l = std::countr_zero(m);
        const auto addr = w.reg(op.ra, l);
        check_address(run.program, run.program.code[w.pc], addr, run.mem_words, l, "ST");
        run.mem[static_cast<std::size_t>(addr)] = w.reg(op.rb, l);
      }
      break;
    }
    case Kind::kBrz: {
      const LaneMask taken = zero_lanes(w.regs[op.ra]) & w.mask;  // lanes whose predicate is zero
      if (taken == w.mask) {  // uniform: everyone jumps, nothing to remember
        check_backward(run.program, run.program.code[w.pc], w, op.target);
        next_pc = op.target;
      } else if (taken != 0) {  // divergent: remember the taken lanes, run the fall-through first
        if (op.target <= w.pc)
          fault(run.program, run.program.code[w.pc],
                "divergent backward branch: lanes disagree on a loop condition; make it warp-uniform");
        const std::uint32_t join = bug.reconverge_at_target ? op.target : op.join;
        w.stack.push({join, w.pc, w.mask, taken, op.target, true});
        w.mask &= ~taken;
      }
      break;
    }
    case Kind::kJmp:
      if (bug.jmp_reconverges && !w.stack.empty()) {
        // The bug: treating the jump to the join as the join itself. The
        // saved mask comes back and the taken path is silently dropped.
        w.mask = w.stack.top().saved_mask;
        w.stack.pop();
      } else {
        check_backward(run.program, run.program.code[w.pc], w, op.target);
      }
      next_pc = op.target;
      break;
    case Kind::kReconv:
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

}  // namespace

// Cloned for x86-64-v3 (AVX2, BMI2, POPCNT) and the baseline x86-64, picked once at load time: the 32
// 64-bit lanes of an ALU op are 8 AVX2 operations instead of 16 SSE2 ones.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_ADDRESS__)
__attribute__((target_clones("arch=x86-64-v3", "default")))
#endif
std::uint64_t issue_slice(Warp& w, bool stay, RunState& run, std::uint64_t cycle) {
  const Hot hot{run.program,
                run.code.data(),
                run.mem.data(),
                run.mem.size(),
                1 + static_cast<std::uint64_t>(run.config.load_latency),
                run.config.pitfalls};
  const std::size_t size = run.code.size();
  const std::uint64_t max_issues = run.config.max_issues;
  const auto& on_issue = run.config.on_issue;
  const bool trace = static_cast<bool>(on_issue);
  // The counters live in registers for the slice and are written back once.
  std::uint64_t issues = run.stats.issues;
  std::uint64_t lane_cycles = run.stats.lane_cycles;
  const std::uint64_t issues_before = issues;
  Blend blend;
  // The live-lane count changes only with the mask: recount only then.
  LaneMask counted = w.mask;
  auto live = static_cast<std::uint64_t>(std::popcount(counted));
  for (;;) {
    if (issues == max_issues) [[unlikely]]
      throw SimtError(fmt::format("{}: runtime error: more than {} issues (a loop that never ends?); raise --max-issues",
                                  run.program.name, max_issues));
    // Every issue costs one slot whatever its mask; util% counts the live lanes.
    ++issues;
    if (w.mask != counted) {
      counted = w.mask;
      live = static_cast<std::uint64_t>(std::popcount(counted));
    }
    lane_cycles += live;
    if (trace) on_issue({cycle, w.id, w.pc, w.mask, &run.program.code[w.pc]});
    const std::uint64_t busy = execute(w, hot, blend);
    ++cycle;
    if (!stay || busy != 1 || w.pc >= size) {
      w.ready_cycle = cycle - 1 + busy;
      w.issues += issues - issues_before;
      run.stats.issues = issues;
      run.stats.lane_cycles = lane_cycles;
      return cycle;
    }
  }
}

}  // namespace simt
