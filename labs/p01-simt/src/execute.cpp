#include "execute.hpp"

#include <fmt/core.h>

#include <array>
#include <bit>
#include <cstring>

namespace simt {
namespace {

using Lanes = std::array<std::int64_t, kWarpSize>;

// Faults leave the loop through these, out of line: the loop carries no
// formatting code, and what fmt instantiates is compiled for baseline x86-64
// only (the ISA-specific copies of the loop below inline nothing else).
[[noreturn, gnu::cold, gnu::noinline]] void fault(const Program& p, std::uint32_t pc, const std::string& what) {
  const Instruction& ins = p.code[pc];
  throw SimtError(fmt::format("{}:{}: runtime error: {} (in '{}')", p.name, ins.line, what, ins.text));
}

[[noreturn, gnu::cold, gnu::noinline]] void bad_address(const Program& p, std::uint32_t pc, const char* what,
                                                        std::int64_t addr, std::size_t size, int lane) {
  fault(p, pc, fmt::format("{} address {} out of range [0, {}) in lane {}", what, addr, size, lane));
}

[[noreturn, gnu::cold, gnu::noinline]] void mod_by_zero(const Program& p, std::uint32_t pc, int lane) {
  fault(p, pc, fmt::format("MOD by zero in lane {}", lane));
}

[[noreturn, gnu::cold, gnu::noinline]] void backward_out_of_region(const Program& p, std::uint32_t pc,
                                                                   std::uint32_t target, std::uint32_t branch_pc) {
  fault(p, pc,
        fmt::format("divergent backward branch to instruction {} leaves the divergent region of line {}; "
                    "make the loop condition warp-uniform",
                    target, p.code[branch_pc].line));
}

[[noreturn, gnu::cold, gnu::noinline]] void too_many_issues(const Program& p, std::uint64_t max_issues) {
  throw SimtError(fmt::format("{}: runtime error: more than {} issues (a loop that never ends?); raise --max-issues",
                              p.name, max_issues));
}

// Inactive lanes are computed too (and discarded): give them a defined result.
[[gnu::always_inline]] inline std::int64_t safe_mod(std::int64_t a, std::int64_t b) {
  if (b == 0 || b == -1) return 0;  // INT64_MIN % -1 overflows in C++; the remainder is 0 anyway
  return a % b;
}

// Four 64-bit lanes as one GCC vector, an eighth of a register: one AVX2
// operation (AVX-512VL in the x86-64-v4 copy of the loop, which also gets a
// native 64-bit multiply and mask registers) or two SSE2 ones. Eight-lane
// vectors were tried for the x86-64-v4 copy: 512-bit registers measured no
// faster on either benchmark, and GCC splits them badly where a target has
// only 256-bit ones. Unsigned, so wrapping is defined.
using V = std::uint64_t __attribute__((vector_size(32)));
using VS = std::int64_t __attribute__((vector_size(32)));
constexpr std::size_t kPerV = 4;
constexpr std::size_t kChunks = kWarpSize / kPerV;
constexpr V kLaneIndex = {0, 1, 2, 3};

[[gnu::always_inline]] inline V load(const std::int64_t* p) {
  V v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
[[gnu::always_inline]] inline void store(std::int64_t* p, V v) { std::memcpy(p, &v, sizeof v); }

// How a masked write commits, decided when the mask changes (a divergent
// BRZ, a RECONV), not on every write: a full mask stores straight; a mask of
// at most four lanes (a case body of a switch, where each lane takes its own
// case) computes and stores just those lanes' words; any other mask blends
// with per-lane select words, built at the first write under that mask (a
// RECONV that switches to the waiting lanes and at once issues again for
// them, as every case of max_divergent does, never writes with its mask).
// Each chunk is read whole before its result is stored, so rd may be ra or
// rb; in the few-lanes mode lanes are independent (a lane's result reads
// only that lane of its sources).
class Writes {
 public:
  // `live` is popcount(mask), which the caller has at hand.
  [[gnu::always_inline]] void set(LaneMask mask, std::uint64_t live) {
    mask_ = mask;
    mode_ = mask == kFullMask ? Mode::kAll : live <= kFewLanes ? Mode::kFew : Mode::kSomeUnbuilt;
  }
  [[nodiscard]] LaneMask mask() const { return mask_; }

  template <class F>
  [[gnu::always_inline]] void write(Lanes& dst, F lanes) {
    switch (mode_) {
      case Mode::kAll:
        #pragma GCC unroll 8
        for (std::size_t c = 0; c < kChunks; ++c) store(&dst[c * kPerV], lanes(c));
        return;
      case Mode::kFew:
        for (LaneMask m = mask_; m != 0; m &= m - 1) {
          const auto l = static_cast<std::size_t>(std::countr_zero(m));
          dst[l] = static_cast<std::int64_t>(lanes(l / kPerV)[l % kPerV]);
        }
        return;
      case Mode::kSomeUnbuilt:
        build_select();
        [[fallthrough]];
      case Mode::kSome:
        #pragma GCC unroll 8
        for (std::size_t c = 0; c < kChunks; ++c) {
          const V keep = select_[c];
          store(&dst[c * kPerV], (lanes(c) & keep) | (load(&dst[c * kPerV]) & ~keep));
        }
        return;
    }
  }

 private:
  enum class Mode : std::uint8_t { kAll, kFew, kSomeUnbuilt, kSome };
  static constexpr std::uint64_t kFewLanes = 4;
  [[gnu::always_inline]] void build_select() {
    mode_ = Mode::kSome;
    #pragma GCC unroll 8
    for (std::size_t c = 0; c < kChunks; ++c) {
      const V bits = V{} + static_cast<std::uint64_t>((mask_ >> (c * kPerV)) & ((1u << kPerV) - 1));
      select_[c] = -((bits >> kLaneIndex) & 1);
    }
  }
  LaneMask mask_ = kFullMask;
  Mode mode_ = Mode::kAll;
  std::array<V, kChunks> select_{};
};

// Bit l of the warp's lane mask in lane l % 4 of chunk l / 4, as a table in
// read-only data (GCC built these vectors at run time when written inline).
constexpr std::array<V, kChunks> kLaneBits = [] {
  std::array<V, kChunks> t{};
  for (std::size_t c = 0; c < kChunks; ++c) {
    const std::size_t l = kPerV * c;
    t[c] = V{1ull << l, 1ull << (l + 1), 1ull << (l + 2), 1ull << (l + 3)};
  }
  return t;
}();

// Lanes whose value is zero, as a mask (BRZ's and VOTE_ANY's predicate): per
// chunk one compare, an and with the chunk's lane bits and an or, then one OR
// across the words at the end.
[[gnu::always_inline]] inline LaneMask zero_lanes(const Lanes& v) {
  V bits{};
  #pragma GCC unroll 8
  for (std::size_t c = 0; c < kChunks; ++c) bits |= reinterpret_cast<V>(load(&v[c * kPerV]) == 0) & kLaneBits[c];
  std::uint64_t any = 0;
  #pragma GCC unroll 8
  for (std::size_t l = 0; l < kPerV; ++l) any |= bits[l];
  return static_cast<LaneMask>(any);
}

// One slice of a warp's issues (see issue_slice). kPlain: no trace hook and no
// pitfall switch, so neither is tested per issue. The warp's pc and mask live
// in locals for the slice; the state that follows from the mask (live lanes,
// how writes commit) is recomputed only where the mask changes.
template <bool kPlain>
[[gnu::always_inline]] inline std::uint64_t slice(Warp& w, bool stay, RunState& run, std::uint64_t cycle) {
  const Program& program = run.program;
  const DecodedOp* const code = run.code.data();
  const auto size = static_cast<std::uint32_t>(program.code.size());  // code[size] is Kind::kEnd
  std::int64_t* const mem = run.mem.data();
  const std::size_t mem_words = run.mem.size();
  const std::uint64_t load_busy = 1 + static_cast<std::uint64_t>(run.config.load_latency);
  const std::uint64_t max_issues = run.config.max_issues;
  const Pitfalls bug = kPlain ? Pitfalls{} : run.config.pitfalls;
  const std::function<void(const IssueEvent&)>* on_issue =
      !kPlain && run.config.on_issue ? &run.config.on_issue : nullptr;

  const std::uint64_t issues_before = run.stats.issues;
  if (issues_before == max_issues) [[unlikely]]
    too_many_issues(program, max_issues);
  // Issues this slice may make: one without `stay`, else up to max_issues
  // (the next slice then throws above, as the next issue would have).
  const std::uint64_t budget = stay ? max_issues - issues_before : 1;
  std::uint64_t left = budget;
  std::uint64_t lane_cycles = run.stats.lane_cycles;
  std::uint64_t busy = 1;
  // The next instruction to issue; each record carries its own index.
  const DecodedOp* ip = code + w.pc;
  std::uint32_t final_pc = 0;  // w.pc after the slice
  LaneMask mask = 0;
  std::uint64_t live = 0;
  Writes writes;
  // Called at the start and by an instruction that changes the mask (its own
  // issue has counted the old mask's live lanes).
  const auto set_mask = [&](LaneMask m) __attribute__((always_inline)) {
    mask = m;
    live = static_cast<std::uint64_t>(std::popcount(m));
    // Masks gate writes, never reads. The unmasked-writes bug lets every lane commit.
    if (!kPlain && bug.unmasked_writes) {
      writes.set(kFullMask, kWarpSize);
    } else {
      writes.set(m, live);
    }
  };
  set_mask(w.mask);
  // A control transfer to `target` that leaves the innermost divergent region
  // backwards would make lanes loop a different number of times: per-lane trip
  // counts need per-thread PCs, which this (pre-Volta) machine does not have.
  const auto check_backward = [&](std::uint32_t pc, std::uint32_t target) __attribute__((always_inline)) {
    if (!w.stack.empty() && target <= w.stack.top().branch_pc) [[unlikely]]
      backward_out_of_region(program, pc, target, w.stack.top().branch_pc);
  };
  const auto check_address = [&](std::uint32_t pc, std::int64_t addr, int lane, const char* what)
                                 __attribute__((always_inline)) {
    if (addr < 0 || static_cast<std::uint64_t>(addr) >= mem_words) [[unlikely]]
      bad_address(program, pc, what, addr, mem_words, lane);
  };
  const auto alu_r = [&](const DecodedOp& op, auto f) __attribute__((always_inline)) {
    const std::int64_t* a = w.regs[op.ra].data();
    const std::int64_t* b = w.regs[op.rb].data();
    writes.write(w.regs[op.rd], [&](std::size_t c) __attribute__((always_inline)) {
      return f(load(a + c * kPerV), load(b + c * kPerV));
    });
  };
  const auto alu_i = [&](const DecodedOp& op, auto f) __attribute__((always_inline)) {
    const std::int64_t* a = w.regs[op.ra].data();
    const V b = V{} + static_cast<std::uint64_t>(op.imm);
    writes.write(w.regs[op.rd], [&](std::size_t c) __attribute__((always_inline)) { return f(load(a + c * kPerV), b); });
  };
  const auto add = [](V a, V b) __attribute__((always_inline)) { return a + b; };
  const auto sub = [](V a, V b) __attribute__((always_inline)) { return a - b; };
  const auto mul = [](V a, V b) __attribute__((always_inline)) { return a * b; };
  const auto seq = [](V a, V b) __attribute__((always_inline)) { return reinterpret_cast<V>(a == b) & 1; };
  const auto slt = [](V a, V b) __attribute__((always_inline)) {
    return reinterpret_cast<V>(reinterpret_cast<VS>(a) < reinterpret_cast<VS>(b)) & 1;
  };
  // MOD lane by lane: there is no vector division.
  const auto mod = [](V a, V b) __attribute__((always_inline)) {
    V r;
    for (std::size_t l = 0; l < kPerV; ++l)
      r[l] = static_cast<std::uint64_t>(safe_mod(static_cast<std::int64_t>(a[l]), static_cast<std::int64_t>(b[l])));
    return r;
  };

  for (;;) {
    const DecodedOp& op = *ip;
    const std::uint32_t pc = op.pc;
    if constexpr (!kPlain) {
      if (on_issue != nullptr && op.kind != Kind::kEnd)
        (*on_issue)({cycle + (budget - left), w.id, pc, mask, &program.code[pc]});
    }
    // Every issue costs one slot whatever its mask. An instruction that ends
    // the slice (LD stalls the warp, a jump past the end finishes it) leaves
    // through `out` with ip and left updated, or past_end with final_pc.
    const DecodedOp* next = ip + 1;
    lane_cycles += live;  // util% counts the live lanes of every issue
    switch (op.kind) {
      default:
        __builtin_unreachable();
      case Kind::kEnd:  // the PC passed the last instruction: the warp is done, nothing issued
        lane_cycles -= live;
        goto out;
      case Kind::kTid: {
        const V base = V{} + static_cast<std::uint64_t>(w.id) * kWarpSize + kLaneIndex;
        writes.write(w.regs[op.rd], [&](std::size_t c) __attribute__((always_inline)) { return base + c * kPerV; });
        break;
      }
      case Kind::kLi: {
        const V v = V{} + static_cast<std::uint64_t>(op.imm);
        writes.write(w.regs[op.rd], [&](std::size_t) __attribute__((always_inline)) { return v; });
        break;
      }
      case Kind::kAddR: alu_r(op, add); break;
      case Kind::kAddI: alu_i(op, add); break;
      case Kind::kSubR: alu_r(op, sub); break;
      case Kind::kSubI: alu_i(op, sub); break;
      case Kind::kMulR: alu_r(op, mul); break;
      case Kind::kMulI: alu_i(op, mul); break;
      case Kind::kSeqR: alu_r(op, seq); break;
      case Kind::kSeqI: alu_i(op, seq); break;
      case Kind::kSltR: alu_r(op, slt); break;
      case Kind::kSltI: alu_i(op, slt); break;
      case Kind::kModR:
        for (LaneMask m = writes.mask(); m != 0; m &= m - 1) {
          const int l = std::countr_zero(m);
          if (w.reg(op.rb, l) == 0) mod_by_zero(program, pc, l);
        }
        alu_r(op, mod);
        break;
      case Kind::kModI:
        if (op.imm == 0 && writes.mask() != 0) mod_by_zero(program, pc, std::countr_zero(writes.mask()));
        alu_i(op, mod);
        break;
      case Kind::kSelp: {
        const std::int64_t* a = w.regs[op.ra].data();
        const std::int64_t* b = w.regs[op.rb].data();
        const std::int64_t* p = w.regs[op.rp].data();
        writes.write(w.regs[op.rd], [&](std::size_t c) __attribute__((always_inline)) {
          const V on = reinterpret_cast<V>(load(p + c * kPerV) != 0);
          return (load(a + c * kPerV) & on) | (load(b + c * kPerV) & ~on);
        });
        break;
      }
      case Kind::kVoteAny: {
        // One issue: the active lanes' predicate bits are OR-ed inside the warp,
        // with no memory traffic. Inactive lanes do not vote.
        const V any = V{} + std::uint64_t{(~zero_lanes(w.regs[op.ra]) & mask) != 0};
        writes.write(w.regs[op.rd], [&](std::size_t) __attribute__((always_inline)) { return any; });
        break;
      }
      case Kind::kLd:
        // Only the writing lanes, lowest first (a fault names the lowest bad lane).
        for (LaneMask m = writes.mask(); m != 0; m &= m - 1) {
          const int l = std::countr_zero(m);
          const auto addr = w.reg(op.ra, l);
          check_address(pc, addr, l, "LD");
          w.regs[op.rd][static_cast<std::size_t>(l)] = mem[static_cast<std::size_t>(addr)];
        }
        ++w.loads;
        busy = load_busy;
        ip = next;
        --left;
        goto out;
      case Kind::kSt:
        for (LaneMask m = writes.mask(); m != 0; m &= m - 1) {  // on an address conflict the highest lane wins
          const int l = std::countr_zero(m);
          const auto addr = w.reg(op.ra, l);
          check_address(pc, addr, l, "ST");
          mem[static_cast<std::size_t>(addr)] = w.reg(op.rb, l);
        }
        break;
      case Kind::kBrz: {
        const LaneMask taken = zero_lanes(w.regs[op.ra]) & mask;  // lanes whose predicate is zero
        if (taken == mask) {  // uniform: everyone jumps, nothing to remember
          check_backward(pc, op.target);
          if (op.target > size) [[unlikely]] {
            final_pc = op.target;
            goto past_end;
          }
          next = code + op.target;
        } else if (taken != 0) {  // divergent: remember the taken lanes, run the fall-through first
          if (op.target <= pc)
            fault(program, pc, "divergent backward branch: lanes disagree on a loop condition; make it warp-uniform");
          const std::uint32_t join = !kPlain && bug.reconverge_at_target ? op.target : op.join;
          w.stack.push({join, pc, mask, taken, op.target, true});
          set_mask(mask & ~taken);
        }
        break;
      }
      case Kind::kJmp:
        if (!kPlain && bug.jmp_reconverges && !w.stack.empty()) {
          // The bug: treating the jump to the join as the join itself. The
          // saved mask comes back and the taken path is silently dropped.
          set_mask(w.stack.top().saved_mask);
          w.stack.pop();
        } else {
          check_backward(pc, op.target);
        }
        if (op.target > size) [[unlikely]] {
          final_pc = op.target;
          goto past_end;
        }
        next = code + op.target;
        break;
      case Kind::kReconv:
        // Only the join named by the innermost entry acts; any other RECONV is a
        // no-op (but still an issue).
        if (!w.stack.empty() && w.stack.top().join_pc == pc) {
          StackEntry& top = w.stack.top();
          if (top.taken_pending) {
            top.taken_pending = false;
            set_mask(top.taken_mask);
            // May be this very RECONV: it then issues again for the taken lanes.
            if (top.taken_pc > size) [[unlikely]] {
              final_pc = top.taken_pc;
              goto past_end;
            }
            next = code + top.taken_pc;
          } else {
            set_mask(top.saved_mask);
            w.stack.pop();
            // Two regions can share a join; the outer one is handled by issuing this RECONV again.
            if (!w.stack.empty() && w.stack.top().join_pc == pc) next = ip;
          }
        }
        break;
    }
    ip = next;
    if (--left == 0) break;
  }
out:
  final_pc = ip->pc;
  goto done;
past_end:  // a jump beyond the last instruction: the warp is done
  --left;
done:
  const std::uint64_t issued = budget - left;
  w.pc = final_pc;
  w.mask = mask;
  w.issues += issued;
  run.stats.issues = issues_before + issued;
  run.stats.lane_cycles = lane_cycles;
  cycle += issued;
  w.ready_cycle = cycle - 1 + busy;
  return cycle;
}

using SliceFn = std::uint64_t (*)(Warp&, bool, RunState&, std::uint64_t);

// The loop, compiled once per instruction set. Only these functions carry a
// target attribute, and they inline everything above (always_inline), so no
// shared (inline or template) function is ever compiled for a CPU level the
// host may lack.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define SIMT_TARGET(isa) __attribute__((target(isa)))
#else
#define SIMT_TARGET(isa)
#endif

template <bool kPlain>
SIMT_TARGET("arch=x86-64-v4") std::uint64_t slice_v4(Warp& w, bool stay, RunState& run, std::uint64_t cycle) {
  return slice<kPlain>(w, stay, run, cycle);
}
template <bool kPlain>
SIMT_TARGET("arch=x86-64-v3") std::uint64_t slice_v3(Warp& w, bool stay, RunState& run, std::uint64_t cycle) {
  return slice<kPlain>(w, stay, run, cycle);
}
template <bool kPlain>
std::uint64_t slice_baseline(Warp& w, bool stay, RunState& run, std::uint64_t cycle) {
  return slice<kPlain>(w, stay, run, cycle);
}

}  // namespace

std::uint64_t issue_slice(Warp& w, bool stay, RunState& run, std::uint64_t cycle) {
  const bool plain = !run.config.on_issue && !run.config.pitfalls.reconverge_at_target &&
                     !run.config.pitfalls.unmasked_writes && !run.config.pitfalls.jmp_reconverges;
  SliceFn fn = nullptr;
  switch (run.isa) {
    case VectorIsa::kV4: fn = plain ? slice_v4<true> : slice_v4<false>; break;
    case VectorIsa::kV3: fn = plain ? slice_v3<true> : slice_v3<false>; break;
    default: fn = plain ? slice_baseline<true> : slice_baseline<false>; break;
  }
  return fn(w, stay, run, cycle);
}

}  // namespace simt
