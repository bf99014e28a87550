// What verification costs on the CPU: the reference matmul per row (which is
// why n > 1024 is checked on 64 sampled rows) and the tolerance check.
//   build/default/bin/bench-kernels
#include <benchmark/benchmark.h>

#include "kernels/reference.hpp"
#include "kernels/tolerance.hpp"

namespace {

void BM_CpuMatmulRow(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  const auto a = kernels::random_values(n * n, 1), b = kernels::random_values(n * n, 2);
  const std::vector<std::size_t> row{n / 2};
  for (auto _ : state) benchmark::DoNotOptimize(kernels::cpu_matmul_rows(a, b, n, row).data());
  // One row is n^2 FMAs = 2n^2 FLOP.
  state.counters["GFLOP/s"] = benchmark::Counter(
      2.0 * static_cast<double>(n * n) * static_cast<double>(state.iterations()) / 1e9,
      benchmark::Counter::kIsRate);
}
BENCHMARK(BM_CpuMatmulRow)->Arg(256)->Arg(1024)->Unit(benchmark::kMillisecond);

void BM_CheckClose(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  const auto want = kernels::random_values(n, 3);
  auto got = want;
  for (auto& v : got) v *= 1.0001f;
  for (auto _ : state) benchmark::DoNotOptimize(kernels::check_close(got, want).mismatches);
  state.SetItemsProcessed(static_cast<std::int64_t>(n) * state.iterations());
}
BENCHMARK(BM_CheckClose)->Arg(1 << 20);

}  // namespace
