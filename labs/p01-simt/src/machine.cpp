#include "simt/machine.hpp"

#include <fmt/core.h>

#include <bit>

#include "execute.hpp"

namespace simt {

double RunStats::util_pct() const {
  return issues ? 100.0 * static_cast<double>(lane_cycles) / (static_cast<double>(issues) * kWarpSize) : 0.0;
}

double RunStats::issue_util_pct() const {
  return cycles ? 100.0 * static_cast<double>(issues) / static_cast<double>(cycles) : 0.0;
}

namespace {

class Scheduler {
 public:
  Scheduler(std::vector<Warp>& warps, std::size_t program_size, SchedulingPolicy policy)
      : warps_(warps), size_(program_size), policy_(policy) {}

  // The warp to issue at `cycle`, or -1 if every unfinished warp is stalled.
  int pick(std::uint64_t cycle) {
    const int n = static_cast<int>(warps_.size());
    // Greedy-then-oldest starts at the warp that issued last; round-robin
    // starts at the one after it.
    const int start = policy_ == SchedulingPolicy::kGreedy ? last_ : (last_ + 1) % n;
    if (policy_ == SchedulingPolicy::kGreedy && eligible(start, cycle)) return start;
    for (int k = 0; k < n; ++k) {
      const int w = policy_ == SchedulingPolicy::kGreedy ? k : (start + k) % n;  // oldest = lowest id
      if (eligible(w, cycle)) return last_ = w;
    }
    return -1;
  }

  [[nodiscard]] bool all_done() const {
    for (const auto& w : warps_)
      if (w.pc < size_) return false;
    return true;
  }

  // The earliest cycle at which a stalled, unfinished warp becomes eligible.
  [[nodiscard]] std::uint64_t next_ready() const {
    std::uint64_t best = UINT64_MAX;
    for (const auto& w : warps_)
      if (w.pc < size_ && w.ready_cycle < best) best = w.ready_cycle;
    return best;
  }

 private:
  [[nodiscard]] bool eligible(int w, std::uint64_t cycle) const {
    const Warp& warp = warps_[static_cast<std::size_t>(w)];
    return warp.pc < size_ && warp.ready_cycle <= cycle;
  }

  std::vector<Warp>& warps_;
  std::size_t size_;
  SchedulingPolicy policy_;
  int last_ = 0;
};

}  // namespace

RunResult run(const Program& program, const Config& config) {
  if (config.warps < 1 || config.warps > 1024)
    throw gpulab::UsageError(fmt::format("--warps must be in [1, 1024], got {}", config.warps));
  if (config.mem_words < 1 || config.mem_words > (std::size_t{1} << 28))
    throw gpulab::UsageError(fmt::format("--mem-words must be in [1, 2^28], got {}", config.mem_words));

  if (!vector_isa_supported(config.isa))
    throw gpulab::UsageError(fmt::format("this CPU cannot run the {} copy of the simulator", vector_isa_name(config.isa)));
  const VectorIsa isa = config.isa == VectorIsa::kAuto ? best_vector_isa() : config.isa;

  RunResult result;
  result.mem.assign(config.mem_words, 0);
  result.warps.resize(static_cast<std::size_t>(config.warps));
  for (int i = 0; i < config.warps; ++i) result.warps[static_cast<std::size_t>(i)].id = i;

  RunStats& s = result.stats;
  // The assembler's decoded form, unless the Program was built or edited by hand.
  std::vector<DecodedOp> decoded_here;
  const bool pre_decoded = program.decoded != nullptr && program.decoded->ops.size() == program.code.size() + 1;
  if (!pre_decoded) decoded_here = decode(program);
  RunState state{program, pre_decoded ? program.decoded->ops : decoded_here, result.mem, config, s, isa};
  Scheduler scheduler(result.warps, program.code.size(), config.policy);
  // The scheduler picks the warp that just issued again as long as it stays
  // eligible under greedy-then-oldest, and always with one warp: then the
  // warp issues a whole slice without going back through the scheduler.
  const bool stay = config.policy == SchedulingPolicy::kGreedy || config.warps == 1;
  std::uint64_t cycle = 0;
  while (!scheduler.all_done()) {
    const int wi = scheduler.pick(cycle);
    if (wi < 0) {  // every warp is waiting on a load: skip the idle cycles
      cycle = scheduler.next_ready();
      continue;
    }
    cycle = issue_slice(result.warps[static_cast<std::size_t>(wi)], stay, state, cycle);
  }
  s.cycles = cycle;
  for (const auto& w : result.warps) {
    s.loads += w.loads;
    s.max_stack_depth = std::max(s.max_stack_depth, w.stack.max_depth());
    s.stack_empty_at_exit = s.stack_empty_at_exit && w.stack.empty();
  }
  return result;
}

}  // namespace simt
