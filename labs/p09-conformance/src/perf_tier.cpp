#include "conformance/perf_tier.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <thread>
#include <vector>

#include "gpulab/timing.hpp"

namespace conformance {

std::string_view name_of(Tier t) {
  switch (t) {
    case Tier::kCertified:
      return "certified";
    case Tier::kSupportedNotRecommended:
      return "supported-not-recommended";
    case Tier::kNotCertified:
      return "not certified";
    case Tier::kNotMeasured:
      return "-";
  }
  return "?";
}

Tier classify_tier(bool conformant, std::optional<double> ratio, double threshold) {
  if (!conformant) return Tier::kNotCertified;
  if (!ratio) return Tier::kNotMeasured;
  return *ratio >= threshold ? Tier::kCertified : Tier::kSupportedNotRecommended;
}

double matmul_gflops(std::uint64_t m, std::uint64_t n, std::uint64_t k, double seconds) {
  if (seconds <= 0) return 0;
  return 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k) / seconds /
         1e9;
}

namespace {

// 32 independent accumulators: enough chains to cover FMA latency x width, so
// the loop runs at the core's multiply-add throughput. Returns flops done.
double fma_burst(std::uint64_t iterations, float seed) {
  std::array<float, 32> acc{};
  for (std::size_t i = 0; i < acc.size(); ++i) acc[i] = seed + static_cast<float>(i);
  const float mul = 0.999999f;
  const float add = 1e-7f;
  for (std::uint64_t it = 0; it < iterations; ++it)
    for (float& a : acc) a = a * mul + add;
  // Keep the result alive so the loop is not removed.
  volatile float sink = 0;
  for (float a : acc) sink = sink + a;
  (void)sink;
  return 2.0 * static_cast<double>(iterations) * static_cast<double>(acc.size());
}

}  // namespace

double measure_fma_roof_gflops(unsigned threads, double seconds) {
  threads = std::max(1u, threads);
  // Calibrate one burst on this thread, then run enough bursts on every thread.
  std::uint64_t iterations = 1 << 14;
  double t = 0;
  for (;;) {
    gpulab::Stopwatch sw;
    fma_burst(iterations, 1.0f);
    t = sw.seconds();
    if (t > 0.005 || iterations > (std::uint64_t{1} << 34)) break;
    iterations *= 4;
  }
  const auto per_thread =
      static_cast<std::uint64_t>(static_cast<double>(iterations) * std::max(seconds, 0.01) / t);
  std::vector<std::thread> pool;
  std::atomic<bool> go{false};
  std::vector<double> flops(threads, 0);
  for (unsigned i = 0; i < threads; ++i)
    pool.emplace_back([&, i] {
      while (!go.load()) std::this_thread::yield();
      flops[i] = fma_burst(per_thread, static_cast<float>(i + 1));
    });
  gpulab::Stopwatch wall;
  go.store(true);
  for (auto& th : pool) th.join();
  const double elapsed = wall.seconds();
  double total = 0;
  for (double f : flops) total += f;
  return total / elapsed / 1e9;
}

}  // namespace conformance
