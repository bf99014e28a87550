// Benchmarks for testing the bench smoke check itself (tests/bench-smoke/CMakeLists.txt):
// one that passes, one whose correctness check fails, one that cannot run here.
#include <benchmark/benchmark.h>

#include <cstdint>

namespace {

std::uint64_t sum_to(std::uint64_t n) {
  std::uint64_t s = 0;
  for (std::uint64_t i = 1; i <= n; ++i) s += i;
  return s;
}

void BM_Ok(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(sum_to(100));
}

void BM_WrongResult(benchmark::State& state) {
  for (auto _ : state) {
    const std::uint64_t s = sum_to(100);
    benchmark::DoNotOptimize(s);
    if (s != 5051) {  // a deliberately wrong expectation: the check fails
      state.SkipWithError("sum_to(100) != 5051");
      break;
    }
  }
}

void BM_NotHere(benchmark::State& state) {
  state.SkipWithError("SKIPPED: needs a device this machine lacks");
}

}  // namespace

BENCHMARK(BM_Ok);
BENCHMARK(BM_WrongResult);
BENCHMARK(BM_NotHere);
