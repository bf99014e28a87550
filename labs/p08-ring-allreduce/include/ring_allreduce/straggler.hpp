// Straggler detection from per-rank step times. In a synchronous job every
// rank leaves each all-reduce at the same moment, so the whole step takes the
// same time everywhere and cannot name the slow rank; what differs is the time
// a rank spends on its own work before it enters the collective (the slow
// rank's) and the time it then waits inside it (everyone else's). The detector
// scores each rank's median compute time against the other ranks'.
//
// Compute time is the rank's CPU time on its work (CLOCK_THREAD_CPUTIME_ID):
// the analogue of timing a GPU's kernels with CUDA events, which a host thread
// the OS has descheduled does not inflate. On a shared machine wall time
// mostly says who got a core, which is not what a straggler detector is after;
// the wall times are reported next to it.
//
// The score is robust: (x - median) / (1.4826 * MAD), the modified z-score of
// Iglewicz and Hoaglin, whose 3.5 threshold we use. A classic z-score (mean,
// standard deviation) cannot find one outlier among few ranks: the outlier
// inflates the deviation it is measured against, and with N ranks its z can
// never exceed (N-1)/sqrt(N) (1.5 at N = 4), below any sane threshold. The
// median and the MAD stay put while fewer than half the ranks are slow.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "ring_allreduce/launcher.hpp"
#include "ring_allreduce/wire.hpp"

namespace ring {

// MAD times this estimates the standard deviation of normally distributed data.
inline constexpr double kMadToSigma = 1.4826;
// Iglewicz-Hoaglin: a modified z-score above 3.5 is an outlier.
inline constexpr double kStragglerScore = 3.5;
// ... and it must matter: at least this many times the median compute time.
// Four ranks sharing two loaded cores differ by tens of percent from step to
// step; a rank twice as slow as the median is slowing the whole job down.
inline constexpr double kStragglerRatio = 2.0;
// Timings closer than this share of the median are the same timing: without a
// floor, identical ranks give MAD ~ 0 and any jitter scores in the hundreds.
inline constexpr double kScaleFloor = 0.1;

struct RankScore {
  int rank = 0;
  double value = 0;  // the rank's median compute seconds
  double ratio = 0;  // value / median over ranks
  double z = 0;      // classic z-score, for comparison (not used to decide)
  double score = 0;  // robust score, (value - median) / scale
  bool straggler = false;
};

struct Detection {
  double median = 0;  // over ranks
  double mad = 0;     // median absolute deviation from it
  double scale = 0;   // max(kMadToSigma * mad, kScaleFloor * median)
  std::vector<RankScore> ranks;
  std::vector<int> stragglers;  // ranks with score >= kStragglerScore and ratio >= kStragglerRatio
};

// `seconds[r]` is rank r's typical compute time. Needs at least 3 ranks (with
// two, each is as far from the median as the other); throws
// std::invalid_argument otherwise.
Detection detect_stragglers(std::span<const double> seconds);

// ---- the timed steps the ranks run: compute, then a ring all-reduce
struct StragglerSpec {
  std::size_t count = 80'000;  // elements all-reduced each step
  DType dtype = DType::kF64;
  int steps = 20;      // timed steps
  int warmup = 2;      // untimed steps before them
  int slow_rank = -1;  // this rank keeps working until its step cost slow_factor x what it measured
  double slow_factor = 1.0;
};
RankJob straggler_job(const StragglerSpec& spec);

// Every rank's per-step times, in rank order, gathered from the reports.
struct StepTimes {
  std::vector<std::vector<double>> compute;       // [rank][step], CPU seconds on its own work
  std::vector<std::vector<double>> compute_wall;  // [rank][step], the same in wall seconds
  std::vector<std::vector<double>> wait;          // [rank][step], seconds inside the all-reduce
  std::uint64_t wrong = 0;                        // elements off the exact sum, all ranks and steps
};
// Throws std::runtime_error naming a rank that did not finish.
StepTimes fold_step_times(const std::vector<RankOutcome>& ranks);

}  // namespace ring
