// Simulator speed: the bar is a million requests in seconds.
#include <benchmark/benchmark.h>

#include "batching/continuous_batching.hpp"
#include "batching/static_batching.hpp"
#include "batching/workload.hpp"

namespace {

using namespace batching;

std::vector<Request> workload(std::size_t n) {
  WorkloadSpec w;
  w.requests = n;
  return generate(w, 1);
}

void BM_Continuous(benchmark::State& state) {
  const auto reqs = workload(static_cast<std::size_t>(state.range(0)));
  ContinuousOptions o;
  o.max_batch = 16;
  for (auto _ : state) benchmark::DoNotOptimize(simulate_continuous(reqs, o, CostModel{}));
  state.SetItemsProcessed(state.iterations() * state.range(0));  // items = requests
}
BENCHMARK(BM_Continuous)->Arg(10'000)->Arg(1'000'000)->Unit(benchmark::kMillisecond);

void BM_ContinuousChunked(benchmark::State& state) {
  const auto reqs = workload(static_cast<std::size_t>(state.range(0)));
  ContinuousOptions o;
  o.prefill_chunk = 2048;
  for (auto _ : state) benchmark::DoNotOptimize(simulate_continuous(reqs, o, CostModel{}));
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_ContinuousChunked)->Arg(10'000)->Unit(benchmark::kMillisecond);

void BM_Static(benchmark::State& state) {
  const auto reqs = workload(static_cast<std::size_t>(state.range(0)));
  for (auto _ : state) benchmark::DoNotOptimize(simulate_static(reqs, 16, CostModel{}));
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_Static)->Arg(1'000'000)->Unit(benchmark::kMillisecond);

void BM_GenerateWorkload(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(workload(static_cast<std::size_t>(state.range(0))));
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_GenerateWorkload)->Arg(1'000'000)->Unit(benchmark::kMillisecond);

}  // namespace
