// Throughput of the analytic models: warp requests classified per second.
// (A trace-driven extension would feed millions of recorded warp accesses through these.)
//   build/default/bin/bench-coalescing
#include <benchmark/benchmark.h>

#include "coalescing/bank_model.hpp"
#include "coalescing/sector_model.hpp"

namespace {

void BM_DistinctSectors(benchmark::State& state) {
  const auto addr = coalescing::warp_addresses(static_cast<std::uint64_t>(state.range(0)), 4);
  for (auto _ : state) benchmark::DoNotOptimize(coalescing::distinct_sectors(addr, 4));
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_DistinctSectors)->Arg(1)->Arg(32);

void BM_ConflictDegree(benchmark::State& state) {
  const auto addr = coalescing::tile_column_addresses(static_cast<int>(state.range(0)), 0);
  for (auto _ : state) benchmark::DoNotOptimize(coalescing::conflict_degree(addr));
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_ConflictDegree)->Arg(32)->Arg(33);

}  // namespace
