#include "membench/fma_peak.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <atomic>
#include <fstream>
#include <vector>

#include "gpulab/timing.hpp"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace membench {
namespace {

// 12 chains: FMA latency (4 cycles) x 2 pipes = 8 needed on current x86
// cores; 12 leaves room for 5-cycle FMAs and still fits the register file.
constexpr int kChains = 12;

// acc = acc * m + a converges to a/(1-m) and never reaches denormals, so the
// kernel runs at full speed for any iteration count.
constexpr float kMul = 0.999999f;
constexpr float kAdd = 1e-6f;

#if defined(__x86_64__)
__attribute__((target("avx512f"))) float fma_avx512(std::uint64_t iters) {
  __m512 acc[kChains];
  for (int k = 0; k < kChains; ++k) acc[k] = _mm512_set1_ps(static_cast<float>(k));
  const __m512 m = _mm512_set1_ps(kMul), a = _mm512_set1_ps(kAdd);
  for (std::uint64_t i = 0; i < iters; ++i) {
#pragma GCC unroll 12
    for (int k = 0; k < kChains; ++k) acc[k] = _mm512_fmadd_ps(acc[k], m, a);
  }
  for (int k = 1; k < kChains; ++k) acc[0] = _mm512_add_ps(acc[0], acc[k]);
  alignas(64) float lanes[16];  // not _mm512_reduce_add_ps: GCC 12 warns inside its own header
  _mm512_store_ps(lanes, acc[0]);
  float s = 0;
  for (float v : lanes) s += v;
  return s;
}

__attribute__((target("avx2,fma"))) float fma_avx2(std::uint64_t iters) {
  __m256 acc[kChains];
  for (int k = 0; k < kChains; ++k) acc[k] = _mm256_set1_ps(static_cast<float>(k));
  const __m256 m = _mm256_set1_ps(kMul), a = _mm256_set1_ps(kAdd);
  for (std::uint64_t i = 0; i < iters; ++i) {
#pragma GCC unroll 12
    for (int k = 0; k < kChains; ++k) acc[k] = _mm256_fmadd_ps(acc[k], m, a);
  }
  for (int k = 1; k < kChains; ++k) acc[0] = _mm256_add_ps(acc[0], acc[k]);
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, acc[0]);
  float s = 0;
  for (float v : lanes) s += v;
  return s;
}

// SSE2 has no FMA: a multiply and an add per step, still 2 FLOPs per lane.
float mul_add_sse(std::uint64_t iters) {
  __m128 acc[kChains];
  for (int k = 0; k < kChains; ++k) acc[k] = _mm_set1_ps(static_cast<float>(k));
  const __m128 m = _mm_set1_ps(kMul), a = _mm_set1_ps(kAdd);
  for (std::uint64_t i = 0; i < iters; ++i) {
#pragma GCC unroll 12
    for (int k = 0; k < kChains; ++k) acc[k] = _mm_add_ps(_mm_mul_ps(acc[k], m), a);
  }
  for (int k = 1; k < kChains; ++k) acc[0] = _mm_add_ps(acc[0], acc[k]);
  alignas(16) float lanes[4];
  _mm_store_ps(lanes, acc[0]);
  return lanes[0] + lanes[1] + lanes[2] + lanes[3];
}
#endif

// Portable fallback (one lane per chain; the compiler may vectorise it).
float fma_scalar(std::uint64_t iters) {
  float acc[kChains];
  for (int k = 0; k < kChains; ++k) acc[k] = static_cast<float>(k);
  for (std::uint64_t i = 0; i < iters; ++i)
    for (float& x : acc) x = __builtin_fmaf(x, kMul, kAdd);
  float s = 0;
  for (float x : acc) s += x;
  return s;
}

float run_kernel(const CpuDescription& cpu, std::uint64_t iters) {
#if defined(__x86_64__)
  if (cpu.isa == "avx512f") return fma_avx512(iters);
  if (cpu.isa == "avx2+fma") return fma_avx2(iters);
  if (cpu.isa == "sse2") return mul_add_sse(iters);
#endif
  return fma_scalar(iters);
}

std::string cpuinfo_field(const std::string& key) {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(key, 0) != 0) continue;
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    auto v = line.substr(colon + 1);
    v.erase(0, v.find_first_not_of(" \t"));
    return v;
  }
  return {};
}

}  // namespace

CpuDescription describe_cpu() {
  CpuDescription d;
  d.model = cpuinfo_field("model name");
  if (d.model.empty()) d.model = "unknown CPU";
  d.logical_cpus = std::max<int>(1, static_cast<int>(allowed_cpus().size()));
  {
    std::ifstream f("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq");
    double khz = 0;
    if (f >> khz && khz > 0) {
      d.clock_ghz = khz / 1e6;
      d.clock_source = "cpufreq cpuinfo_max_freq";
    }
  }
  if (d.clock_ghz == 0) {
    try {
      d.clock_ghz = std::stod(cpuinfo_field("cpu MHz")) / 1000.0;
      d.clock_source = "/proc/cpuinfo cpu MHz";
    } catch (const std::exception&) {
      d.clock_source = "unknown (pass --clock-ghz)";
    }
  }
#if defined(__x86_64__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) {
    d.isa = "avx512f";
    d.fp32_lanes = 16;
    d.has_fma = true;
  } else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
    d.isa = "avx2+fma";
    d.fp32_lanes = 8;
    d.has_fma = true;
  } else {
    d.isa = "sse2";
    d.fp32_lanes = 4;
  }
#else
  d.isa = "scalar fma";
  d.fp32_lanes = 1;
  d.has_fma = true;
#endif
  return d;
}

double spec_peak_gflops(int cores, double clock_ghz, int fp32_lanes) {
  return static_cast<double>(cores) * clock_ghz * static_cast<double>(fp32_lanes) * 2.0;
}

PeakResult measure_peak(WorkerPool& pool, const CpuDescription& cpu, std::uint64_t iterations,
                        int reps) {
  PeakResult r;
  r.threads = pool.size();
  const std::uint64_t lanes = static_cast<std::uint64_t>(cpu.fp32_lanes);
  r.flops = iterations * kChains * lanes * 2 * static_cast<std::uint64_t>(pool.size());
  const auto stride = std::size_t{16};  // one cache line per worker: no false sharing
  std::vector<float> sums(static_cast<std::size_t>(pool.size()) * stride);
  std::vector<double> cpu_s(sums.size());
  const double per_thread = static_cast<double>(r.flops) / pool.size();
  double best_cpu_rate = 0;
  const auto t = gpulab::time_repeated(
      [&] {
        pool.run([&](int w) {
          const double c0 = gpulab::thread_cpu_seconds();
          sums[static_cast<std::size_t>(w) * stride] = run_kernel(cpu, iterations);
          cpu_s[static_cast<std::size_t>(w) * stride] = gpulab::thread_cpu_seconds() - c0;
        });
        double rate = 0;
        for (std::size_t w = 0; w < cpu_s.size(); w += stride) rate += per_thread / cpu_s[w];
        best_cpu_rate = std::max(best_cpu_rate, rate);
      },
      1, reps);
  for (std::size_t w = 0; w < sums.size(); w += stride) r.checksum += sums[w];
  r.wall_gflops = static_cast<double>(r.flops) / t.min / 1e9;
  r.gflops = pool.size() <= cpu.logical_cpus ? best_cpu_rate / 1e9 : r.wall_gflops;
  return r;
}

}  // namespace membench
