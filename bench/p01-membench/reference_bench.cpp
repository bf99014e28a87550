// membench against the reference methods, in the same process on the same
// machine: STREAM's copy and triad written out the way stream.c has them,
// and an lmbench lat_mem_rd-style random chase (lines linked in shuffled
// order, 4 KiB pages, void** walk). Both STREAMs run on the wall clock, both
// chases on the thread's CPU clock. The counters are the two figures and
// their ratio; the README quotes medians of several runs.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdlib>
#include <numeric>
#include <vector>

#include "gpulab/rng.hpp"
#include "gpulab/timing.hpp"
#include "membench/cache_topology.hpp"
#include "membench/pointer_chase.hpp"
#include "membench/stream.hpp"

namespace {

std::size_t llc() {
  const auto t = membench::read_cache_topology();
  return t.empty() ? std::size_t{32} << 20 : t.last_level_size();
}

// stream.c, single thread: NTIMES passes of copy/scale/add/triad, best time of passes 2..NTIMES.
struct RefStream {
  double copy_gbs = 0, triad_gbs = 0;
};
RefStream reference_stream(std::size_t n, int ntimes) {
  std::vector<double> a(n, 1.0), b(n, 2.0), c(n, 0.0);
  const double scalar = 3.0;
  double best_copy = 1e30, best_triad = 1e30;
  for (int k = 0; k < ntimes; ++k) {
    gpulab::Stopwatch sw;
    for (std::size_t j = 0; j < n; ++j) c[j] = a[j];
    const double t_copy = sw.seconds();
    for (std::size_t j = 0; j < n; ++j) b[j] = scalar * c[j];
    for (std::size_t j = 0; j < n; ++j) c[j] = a[j] + b[j];
    sw.restart();
    for (std::size_t j = 0; j < n; ++j) a[j] = b[j] + scalar * c[j];
    const double t_triad = sw.seconds();
    if (k > 0) {
      best_copy = std::min(best_copy, t_copy);
      best_triad = std::min(best_triad, t_triad);
    }
  }
  benchmark::DoNotOptimize(a.data());
  const auto bytes = static_cast<double>(n * sizeof(double));
  return {2 * bytes / best_copy / 1e9, 3 * bytes / best_triad / 1e9};
}

void BM_StreamAgreement(benchmark::State& state) {
  const std::size_t n = membench::stream_elements_for(llc());
  const int ntimes = static_cast<int>(state.range(0));
  membench::WorkerPool pool(1, -1);
  double ours_copy = 0, ours_triad = 0, ref_copy = 0, ref_triad = 0;
  for (auto _ : state) {
    const auto ours = membench::run_stream(pool, {n, ntimes});
    const auto ref = reference_stream(n, ntimes);
    ours_copy = ours.rate(membench::StreamKernel::kCopy).best_gbs;
    ours_triad = ours.rate(membench::StreamKernel::kTriad).best_gbs;
    ref_copy = ref.copy_gbs;
    ref_triad = ref.triad_gbs;
  }
  state.counters["membench_copy_GBs"] = ours_copy;
  state.counters["stream_copy_GBs"] = ref_copy;
  state.counters["copy_ratio"] = ours_copy / ref_copy;
  state.counters["membench_triad_GBs"] = ours_triad;
  state.counters["stream_triad_GBs"] = ref_triad;
  state.counters["triad_ratio"] = ours_triad / ref_triad;
}
BENCHMARK(BM_StreamAgreement)->Arg(10)->Iterations(1)->Unit(benchmark::kMillisecond);

// lat_mem_rd style: shuffle the line order, link line i to line i+1 of that order, walk void**.
double reference_latency_ns(std::size_t bytes, std::size_t loads) {
  const std::size_t lines = bytes / 64;
  std::vector<std::size_t> order(lines);
  std::iota(order.begin(), order.end(), std::size_t{0});
  gpulab::Rng rng(12345);
  rng.shuffle(std::span<std::size_t>(order));
  auto* mem = static_cast<char*>(std::aligned_alloc(4096, bytes));
  for (std::size_t i = 0; i < lines; ++i)
    *reinterpret_cast<void**>(mem + order[i] * 64) = mem + order[(i + 1) % lines] * 64;
  void** p = reinterpret_cast<void**>(mem + order[0] * 64);
  for (std::size_t i = 0; i < lines; ++i) p = static_cast<void**>(*p);  // warm-up lap
  double best = 1e30;
  for (int rep = 0; rep < 3; ++rep) {  // the same clock membench uses, so busy machines cancel out
    const double c0 = gpulab::thread_cpu_seconds();
    for (std::size_t i = 0; i < loads; ++i) p = static_cast<void**>(*p);
    best = std::min(best, gpulab::thread_cpu_seconds() - c0);
  }
  benchmark::DoNotOptimize(p);
  std::free(mem);
  return best * 1e9 / static_cast<double>(loads);
}

void BM_DramLatencyAgreement(benchmark::State& state) {
  const std::size_t bytes = 4 * llc();  // far past the last level: DRAM
  membench::ChaseOptions small, huge;
  small.loads = huge.loads = static_cast<std::size_t>(state.range(0));
  small.huge_pages = false;
  double ours_small = 0, ours_huge = 0, ref = 0;
  for (auto _ : state) {
    ours_small = membench::time_chase(bytes, small).ns_min;
    ours_huge = membench::time_chase(bytes, huge).ns_min;
    ref = reference_latency_ns(bytes, small.loads);
  }
  state.counters["membench_4k_pages_ns"] = ours_small;
  state.counters["lat_mem_rd_style_ns"] = ref;
  state.counters["latency_ratio"] = ours_small / ref;
  state.counters["membench_huge_pages_ns"] = ours_huge;
}
BENCHMARK(BM_DramLatencyAgreement)->Arg(500'000)->Iterations(1)->Unit(benchmark::kMillisecond);

// Where each latency plateau sits, one size per benchmark (the chase is the whole cost).
void BM_Chase(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0)) / 64;
  gpulab::Rng rng(1);
  const auto next = membench::sattolo_cycle(n, rng);
  const membench::ChaseBuffer buf(next, true);
  const void* p = buf.head();
  constexpr std::size_t kLoads = 100'000;
  for (auto _ : state) p = membench::chase(p, kLoads);
  benchmark::DoNotOptimize(p);
  state.counters["time_per_load"] =
      benchmark::Counter(static_cast<double>(kLoads) * static_cast<double>(state.iterations()),
                         benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_Chase)->RangeMultiplier(16)->Range(16 << 10, 64 << 20);

}  // namespace
