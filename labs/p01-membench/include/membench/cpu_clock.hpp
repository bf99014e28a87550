// The calling thread's CPU clock. membench's single-core figures are timed on
// it as well as on the wall clock: on a shared machine the scheduler hands
// the core to other processes mid-measurement, and wall time would count
// those milliseconds as memory latency or missing FLOPs.
#pragma once

#include <time.h>

namespace membench {

inline double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

}  // namespace membench
