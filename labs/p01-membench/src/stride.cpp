// Compiled with -O3 -fopenmp-simd (CMakeLists.txt), like the STREAM kernels.
#include "membench/stride.hpp"

#include <cstdint>

#include "gpulab/timing.hpp"
#include "membench/sizes.hpp"

namespace membench {
namespace {

float volatile g_sink = 0;

__attribute__((noinline)) float strided_sum(const float* a, std::size_t n, std::size_t stride) {
  float s = 0;
#pragma omp simd reduction(+ : s)
  for (std::size_t i = 0; i < n; i += stride) s += a[i];
  return s;
}

}  // namespace

std::size_t lines_touched(std::size_t n, std::size_t stride) {
  constexpr std::size_t per_line = kCacheLine / sizeof(float);
  if (stride >= per_line) return (n + stride - 1) / stride;  // every load its own line
  return (n + per_line - 1) / per_line;                     // every line of the array
}

std::vector<StridePoint> stride_sweep(std::size_t n, std::size_t max_stride, int reps) {
  std::vector<float> a(n, 1.0f);
  std::vector<StridePoint> out;
  for (std::size_t s = 1; s <= max_stride; s *= 2) {
    float sum = 0;
    const auto t = gpulab::time_repeated([&] { sum = strided_sum(a.data(), n, s); }, 1, reps);
    g_sink = sum;
    StridePoint p;
    p.stride = s;
    p.loads = (n + s - 1) / s;
    p.lines = lines_touched(n, s);
    p.effective_gbs = static_cast<double>(p.loads * sizeof(float)) / t.min / 1e9;
    p.line_gbs = static_cast<double>(p.lines * kCacheLine) / t.min / 1e9;
    out.push_back(p);
  }
  return out;
}

}  // namespace membench
