// Compiled with -O3 (CMakeLists.txt), like the STREAM kernels.
#include "membench/stride.hpp"

#include <algorithm>
#include <cstdint>

#include "gpulab/timing.hpp"
#include "membench/sizes.hpp"

namespace membench {
namespace {

float volatile g_sink = 0;

// Eight independent accumulators: the adds never form one long dependency
// chain, so the loop is limited by loads, not by add latency, at every stride.
__attribute__((noinline)) float strided_sum(const float* a, std::size_t n, std::size_t stride) {
  float acc[8] = {};
  std::size_t i = 0;
  for (; i + 7 * stride < n; i += 8 * stride) {
#pragma GCC unroll 8
    for (std::size_t k = 0; k < 8; ++k) acc[k] += a[i + k * stride];
  }
  for (; i < n; i += stride) acc[0] += a[i];
  float s = 0;
  for (float x : acc) s += x;
  return s;
}

}  // namespace

std::size_t lines_touched(std::size_t n, std::size_t stride) {
  constexpr std::size_t per_line = kCacheLine / sizeof(float);
  if (stride >= per_line) return (n + stride - 1) / stride;  // every load its own line
  return (n + per_line - 1) / per_line;                      // every line of the array
}

std::vector<StridePoint> stride_sweep(std::size_t n, std::size_t max_stride, int reps) {
  std::vector<float> a(n, 1.0f);
  std::vector<StridePoint> out;
  for (std::size_t s = 1; s <= max_stride; s *= 2) {
    float sum = strided_sum(a.data(), n, s);  // warm-up
    double best = 1e300;
    for (int r = 0; r < reps; ++r) {  // single-threaded: the thread's CPU clock (gpulab/timing.hpp)
      const double c0 = gpulab::thread_cpu_seconds();
      sum += strided_sum(a.data(), n, s);
      best = std::min(best, gpulab::thread_cpu_seconds() - c0);
    }
    g_sink = sum;
    StridePoint p;
    p.stride = s;
    p.loads = (n + s - 1) / s;
    p.lines = lines_touched(n, s);
    p.effective_gbs = static_cast<double>(p.loads * sizeof(float)) / best / 1e9;
    p.line_gbs = static_cast<double>(p.lines * kCacheLine) / best / 1e9;
    out.push_back(p);
  }
  return out;
}

}  // namespace membench
