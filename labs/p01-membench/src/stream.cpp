// Compiled with -O3 -fopenmp-simd (see CMakeLists.txt): STREAM's loops are
// meant to be vectorised, and the read-only sum needs `omp simd reduction`
// to be, since reassociating a floating-point sum is otherwise forbidden.
#include "membench/stream.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <memory>
#include <new>

#include "gpulab/timing.hpp"

namespace membench {
namespace {

constexpr double kScalar = 3.0;
constexpr double kWriteValue = 7.0;

struct FreeDeleter {
  void operator()(double* p) const noexcept { std::free(p); }
};
using Array = std::unique_ptr<double[], FreeDeleter>;

Array allocate(std::size_t n) {
  const std::size_t bytes = (n * sizeof(double) + 4095) / 4096 * 4096;
  auto* p = static_cast<double*>(std::aligned_alloc(4096, bytes));
  if (!p) throw std::bad_alloc();
  return Array(p);
}

double volatile g_sum_sink = 0;

// STREAM's checkSTREAMresults: replay the kernels on scalars and compare the
// average absolute error of every array against a relative epsilon.
bool check(const double* arr, std::size_t n, double expect, std::string_view label,
           std::string& why) {
  double err = 0;
  for (std::size_t j = 0; j < n; ++j) err += std::abs(arr[j] - expect);
  err /= static_cast<double>(n);
  if (std::abs(err / expect) > 1e-13) {
    why += fmt::format("{}: average relative error {:.3e} (expected {:.6e}); ", label,
                       err / std::abs(expect), expect);
    return false;
  }
  return true;
}

}  // namespace

const char* name(StreamKernel k) {
  switch (k) {
    case StreamKernel::kCopy:
      return "copy";
    case StreamKernel::kScale:
      return "scale";
    case StreamKernel::kAdd:
      return "add";
    case StreamKernel::kTriad:
      return "triad";
    case StreamKernel::kRead:
      return "read";
    case StreamKernel::kWrite:
      return "write";
  }
  return "?";
}

std::size_t stream_bytes(StreamKernel k, std::size_t n) {
  switch (k) {
    case StreamKernel::kCopy:
    case StreamKernel::kScale:
      return 2 * sizeof(double) * n;
    case StreamKernel::kAdd:
    case StreamKernel::kTriad:
      return 3 * sizeof(double) * n;
    case StreamKernel::kRead:
    case StreamKernel::kWrite:
      return sizeof(double) * n;
  }
  return 0;
}

std::size_t stream_elements_for(std::size_t llc_bytes) {
  return std::max<std::size_t>(10'000'000, 4 * llc_bytes / sizeof(double));
}

const StreamRate& StreamResult::rate(StreamKernel k) const {
  for (const auto& r : rates)
    if (r.kernel == k) return r;
  throw std::out_of_range("no such STREAM kernel in this result");
}

StreamResult run_stream(WorkerPool& pool, const StreamConfig& cfg) {
  const std::size_t n = cfg.elements;
  const int threads = pool.size();
  Array a = allocate(n), b = allocate(n), c = allocate(n);
  double* A = a.get();
  double* B = b.get();
  double* C = c.get();
  std::vector<double> partial(static_cast<std::size_t>(threads) * 8);  // one cache line per worker

  const auto body = [&](StreamKernel k) {
    return [&, k](int t) {
      const auto [lo, hi] = slice(n, t, threads);
      switch (k) {
        case StreamKernel::kCopy:
          for (std::size_t j = lo; j < hi; ++j) C[j] = A[j];
          break;
        case StreamKernel::kScale:
          for (std::size_t j = lo; j < hi; ++j) B[j] = kScalar * C[j];
          break;
        case StreamKernel::kAdd:
          for (std::size_t j = lo; j < hi; ++j) C[j] = A[j] + B[j];
          break;
        case StreamKernel::kTriad:
          for (std::size_t j = lo; j < hi; ++j) A[j] = B[j] + kScalar * C[j];
          break;
        case StreamKernel::kRead: {
          double s = 0;
#pragma omp simd reduction(+ : s)
          for (std::size_t j = lo; j < hi; ++j) s += A[j];
          partial[static_cast<std::size_t>(t) * 8] = s;
          break;
        }
        case StreamKernel::kWrite:
          for (std::size_t j = lo; j < hi; ++j) C[j] = kWriteValue;
          break;
      }
    };
  };

  // First touch on the worker that will stream the slice.
  pool.run([&](int t) {
    const auto [lo, hi] = slice(n, t, threads);
    for (std::size_t j = lo; j < hi; ++j) {
      A[j] = 1.0;
      B[j] = 2.0;
      C[j] = 0.0;
    }
  });

  std::vector<std::vector<double>> times(std::size(kAllStreamKernels));
  const auto timed = [&](StreamKernel k) {
    const auto fn = body(k);
    gpulab::Stopwatch sw;
    pool.run(fn);
    times[static_cast<std::size_t>(k)].push_back(sw.seconds());
  };
  // STREAM's order: each of the NTIMES iterations runs copy, scale, add, triad.
  for (int it = 0; it < cfg.ntimes; ++it)
    for (auto k :
         {StreamKernel::kCopy, StreamKernel::kScale, StreamKernel::kAdd, StreamKernel::kTriad})
      timed(k);

  // Replay on scalars what the arrays must now hold.
  double aj = 1.0, bj = 2.0, cj = 0.0;
  for (int it = 0; it < cfg.ntimes; ++it) {
    cj = aj;
    bj = kScalar * cj;
    cj = aj + bj;
    aj = bj + kScalar * cj;
  }
  StreamResult res;
  res.threads = threads;
  res.elements = n;
  std::string why;
  bool ok = check(A, n, aj, "a", why);
  ok = check(B, n, bj, "b", why) && ok;
  ok = check(C, n, cj, "c", why) && ok;

  // The read-only and write-only kernels go after that check: they change what c holds.
  double sum = 0;
  for (int it = 0; it < cfg.ntimes; ++it) {
    timed(StreamKernel::kRead);
    sum = 0;
    for (int t = 0; t < threads; ++t) sum += partial[static_cast<std::size_t>(t) * 8];
    timed(StreamKernel::kWrite);
  }
  g_sum_sink = sum;
  const double expect_sum = aj * static_cast<double>(n);
  if (std::abs(sum - expect_sum) > 1e-9 * std::abs(expect_sum)) {
    ok = false;
    why += fmt::format("read: sum {:.6e}, expected {:.6e}; ", sum, expect_sum);
  }
  ok = check(C, n, kWriteValue, "write", why) && ok;

  res.valid = ok;
  res.validation = ok ? "Solution Validates: avg error less than 1.000000e-13 on all arrays"
                      : fmt::format("Failed Validation: {}", why.substr(0, why.size() - 2));
  for (auto k : kAllStreamKernels) {
    const auto& ts = times[static_cast<std::size_t>(k)];
    StreamRate r;
    r.kernel = k;
    // STREAM drops the first iteration: it pays for page faults and cold caches.
    const std::vector<double> kept(ts.begin() + 1, ts.end());
    r.min_s = *std::min_element(kept.begin(), kept.end());
    r.max_s = *std::max_element(kept.begin(), kept.end());
    r.avg_s = gpulab::mean(kept);
    r.best_gbs = static_cast<double>(stream_bytes(k, n)) / r.min_s / 1e9;
    res.rates.push_back(r);
  }
  return res;
}

}  // namespace membench
