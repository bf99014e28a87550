// Model FLOP utilisation (MFU) of a running train task: the FLOP/s its MLP's
// forward and backward achieve — model FLOPs from the layer shapes
// (task/mlp.hpp's forward_backward_flops), over measured wall-clock seconds
// (its "pace" events) — divided by the peak FLOP/s of its device's backend.
//
// The peak is measured, not quoted: the agent times the HAL's own F32 matmul
// on each of its backends at start, with conformance's perf-tier timing
// (conformance::HalTarget::time_matmul: n x n x n, best of `reps` after one
// warm-up run, the result read back), and keeps the best GFLOP/s over a few
// sizes. MFU is therefore relative to the best matmul this backend ran on
// this host, which is what the task's own matmuls could at most reach.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace platform {

// The sizes the peak is measured at (the MLP's matmuls are small; a big one
// shows what the backend reaches when it is not starved).
inline constexpr std::uint64_t kPeakSizes[] = {64, 128, 256};
inline constexpr int kPeakReps = 3;
// A larger size is timed only if its warm-up and reps, predicted from the last
// size's best time by the n^3 of the work, fit in this: the agent is not ready
// until the peak is measured, and a slow backend (cpu_ref in a ThreadSanitizer
// build: about 7 s for 256^3) must not hold its start for long.
inline constexpr std::chrono::milliseconds kPeakBudget{1000};

struct PeakFlops {
  double flops = 0;         // FLOP/s of the best run
  std::uint64_t n = 0;      // at which size
  std::string source;       // "HAL fast F32 matmul 256x256x256, best of 3"
};

// Times `backend`'s F32 matmul through the HAL at each of kPeakSizes (the
// larger ones while they fit in `budget`, above); nullopt when the HAL does not
// load it here or it cannot run them.
std::optional<PeakFlops> measure_peak_flops(std::string_view backend,
                                            std::chrono::nanoseconds budget = kPeakBudget);

// One "pace" line of a train task: `steps` steps that took `seconds` and did
// `model_flops` FLOPs on this rank.
struct Pace {
  int rank = 0;
  std::uint64_t step = 0;
  std::uint64_t steps = 0;
  double seconds = 0;
  double model_flops = 0;
};

// The last pace line of a task's JSON-lines log; nullopt when there is none
// yet (the first comes about a second into training).
std::optional<Pace> last_pace(std::string_view log);

// FLOP/s the pace shows: model_flops / seconds (0 for no time).
double achieved_flops(const Pace& p);

// achieved_flops / peak; nullopt without a positive peak.
std::optional<double> model_flop_utilisation(const Pace& p, double peak_flops);

}  // namespace platform
