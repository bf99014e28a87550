// How the simulator scales. BM_Place: one placement query + commit + release
// on a half-full cluster, at 100..100,000 nodes — flat if the free-capacity
// index works. BM_Simulate: whole traces up to 1,000,000 jobs on 10,000 nodes.
#include <benchmark/benchmark.h>

#include "cluster_sim/placement.hpp"
#include "cluster_sim/simulator.hpp"
#include "cluster_sim/trace.hpp"
#include "gpulab/rng.hpp"

namespace cs = cluster_sim;

static void BM_Place(benchmark::State& state) {
  const int nodes = static_cast<int>(state.range(0));
  cs::Cluster c(nodes, 8);
  gpulab::Rng rng(1);
  for (int n = 0; n < nodes; ++n) {
    const auto busy = static_cast<int>(rng.uniform_int(0, 8));
    c.take(cs::Slice{n, cs::lowest_bits(c.free_mask(n), busy), 0});
  }
  const auto policy = static_cast<cs::Policy>(state.range(1));
  int size = 1;
  for (auto _ : state) {
    auto p = cs::place(c, policy, size, 0);
    if (p) {
      for (const auto& s : *p) c.take(s);
      for (const auto& s : *p) c.give(s);
    }
    benchmark::DoNotOptimize(p);
    size = size % 8 + 1;
  }
  state.SetLabel(std::string(cs::policy_name(policy)));
}
BENCHMARK(BM_Place)
    ->ArgsProduct({{100, 1000, 10000, 100000},
                   {static_cast<int>(cs::Policy::kFirstFit), static_cast<int>(cs::Policy::kBestFit)}});

static void BM_Simulate(benchmark::State& state) {
  cs::GeneratorConfig g;
  g.nodes = static_cast<int>(state.range(0));
  g.jobs = static_cast<std::size_t>(state.range(1));
  g.load = 0.95;
  const auto jobs = cs::generate_trace(g);
  cs::SimConfig cfg;
  cfg.nodes = g.nodes;
  cfg.gpus_per_node = 8;
  for (auto _ : state) {
    auto r = cs::simulate(jobs, cfg);
    benchmark::DoNotOptimize(r.util_pct);
  }
  state.counters["jobs/s"] = benchmark::Counter(static_cast<double>(g.jobs) * static_cast<double>(state.iterations()),
                                                benchmark::Counter::kIsRate);
}
BENCHMARK(BM_Simulate)
    ->Args({100, 10'000})
    ->Args({1'000, 100'000})
    ->Args({10'000, 1'000'000})
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);
