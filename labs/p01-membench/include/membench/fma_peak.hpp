// Peak floating-point throughput: an FMA microkernel with enough independent
// accumulators to cover the FMA latency on every pipe, in the widest vector
// width the CPU supports (AVX-512, AVX2+FMA, or SSE), next to the
// spec-sheet estimate cores x clock x SIMD width x 2.
#pragma once

#include <cstdint>
#include <string>

#include "membench/worker_pool.hpp"

namespace membench {

struct CpuDescription {
  std::string model;     // /proc/cpuinfo "model name"
  int logical_cpus = 1;  // CPUs this process may use
  double clock_ghz = 0;  // cpufreq max, else /proc/cpuinfo "cpu MHz"; 0 = unknown
  std::string clock_source;
  std::string isa;     // the vector ISA the FMA kernel uses
  int fp32_lanes = 1;  // fp32 elements per vector of that ISA
  bool has_fma = false;
};

CpuDescription describe_cpu();

// cores x clock x SIMD width x 2 (one FMA = 2 FLOPs), in GFLOP/s; 0 if the clock is unknown.
double spec_peak_gflops(int cores, double clock_ghz, int fp32_lanes);

struct PeakResult {
  int threads = 1;
  // Best repetition, each thread timed on its own CPU clock and the rates
  // summed: the cores' throughput even when the scheduler time-slices them.
  // (Falls back to wall time when there are more threads than CPUs.)
  double gflops = 0;
  double wall_gflops = 0;   // best repetition by the wall clock
  std::uint64_t flops = 0;  // per repetition, all threads
  float checksum = 0;       // fed from the accumulators so the kernel cannot be elided
};

// `iterations` of the kernel body per thread (each body: 12 vector FMAs).
PeakResult measure_peak(WorkerPool& pool, const CpuDescription& cpu, std::uint64_t iterations,
                        int reps);

}  // namespace membench
