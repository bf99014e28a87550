// membench's parts (latency, bandwidth, peak, roofline, stride) as functions
// that measure, print a section and add it to the JSON document. main.cpp
// only turns flags into Options and calls run().
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace membench {

struct Options {
  std::string part = "all";  // all | latency | bandwidth | peak | roofline | stride
  // latency
  std::size_t min_bytes = 4 << 10;
  std::size_t max_bytes = 256 << 20;
  int steps = 1;  // points per doubling
  std::size_t loads = 10'000'000;
  int reps = 3;
  bool sequential = false;
  bool small_pages = false;
  bool counters = false;
  // bandwidth / peak / roofline / stride
  int threads = 0;              // 0 = every CPU this process may use
  int cpu = -1;                 // pin to this CPU (workers: cpu, cpu+1, ...)
  std::size_t array_bytes = 0;  // per STREAM array; 0 = 4x the last-level cache
  int ntimes = 10;
  std::uint64_t peak_iterations = 20'000'000;
  int matmul_n = 2048;
  std::vector<int> blocks = {8, 16, 32, 64, 128};
  std::size_t max_stride = 128;
  double clock_ghz = 0;  // 0 = detect
  // spec-sheet roofline (no measurement)
  bool spec = false;
  std::optional<double> peak_tflops;
  std::optional<double> bandwidth_tbs;
  double ai = 2.0;
  bool decode = false;
  double params_b = 7.0;
  double bytes_per_param = 2.0;
  // common
  std::string plot_dir;
  bool json = false;
  bool quick = false;
  std::uint64_t seed = 1;
};

// --quick: sizes that keep the whole run to seconds (for tests and CI).
void apply_quick(Options& opts);
// Rejects contradictory or out-of-range options with gpulab::UsageError.
void validate(const Options& opts);
// Runs the selected part(s), prints tables (or one JSON document) on stdout,
// and returns the exit code (1 when a built-in check failed).
int run(const Options& opts);

}  // namespace membench
