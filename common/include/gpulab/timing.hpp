// The timing harness: warm-up runs, then repetitions, reported as min and
// median (min is the usual figure of merit for microbenchmarks; the median
// says how noisy the machine was).
#pragma once

#include <time.h>

#include <chrono>
#include <vector>

#include "gpulab/stats.hpp"

namespace gpulab {

struct TimingResult {
  std::vector<double> seconds;  // one entry per measured repetition
  double min = 0;
  double median = 0;
  double mean = 0;
};

// The calling thread's CPU clock, seconds. Single-threaded measurements on a
// shared machine use it beside (or instead of) wall time: when the scheduler
// hands the core to another process, wall time counts those milliseconds too.
inline double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

class Stopwatch {
 public:
  Stopwatch() : start_(std::chrono::steady_clock::now()) {}
  void restart() { start_ = std::chrono::steady_clock::now(); }
  [[nodiscard]] double seconds() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }

 private:
  std::chrono::steady_clock::time_point start_;
};

// Runs `fn` warmup times unmeasured, then `reps` times measured (reps >= 1).
template <class Fn>
TimingResult time_repeated(Fn&& fn, int warmup, int reps) {
  for (int i = 0; i < warmup; ++i) fn();
  TimingResult r;
  r.seconds.reserve(static_cast<std::size_t>(reps));
  for (int i = 0; i < reps; ++i) {
    Stopwatch sw;
    fn();
    r.seconds.push_back(sw.seconds());
  }
  const Summary s = summarize(r.seconds);
  r.min = s.min;
  r.median = s.median;
  r.mean = s.mean;
  return r;
}

}  // namespace gpulab
