// How long the placement searches take as the cluster grows.
#include <benchmark/benchmark.h>

#include "topology/blast_radius.hpp"
#include "topology/parallel3d.hpp"

namespace {

topo::Cluster cluster_of(int nodes) {
  topo::Cluster c = topo::curriculum_cluster();
  c.nodes = nodes;
  return c;
}

void BM_Search3D(benchmark::State& state) {
  const auto c = cluster_of(static_cast<int>(state.range(0)));
  topo::Workload w;
  w.micro_batches = 64;
  for (auto _ : state) benchmark::DoNotOptimize(topo::search_3d(c, w));
  state.SetLabel(std::to_string(c.gpus()) + " GPUs");
}
BENCHMARK(BM_Search3D)->Arg(4)->Arg(16)->Arg(64)->Unit(benchmark::kMillisecond);

void BM_BlastRadiusSearch(benchmark::State& state) {
  const auto c = cluster_of(static_cast<int>(state.range(0)));
  for (auto _ : state) benchmark::DoNotOptimize(topo::search_min_blast_radius(c, 8, 256.0 * (1 << 20), 80));
  state.SetLabel(std::to_string(c.gpus()) + " GPUs");
}
BENCHMARK(BM_BlastRadiusSearch)->Arg(4)->Arg(16)->Arg(64)->Unit(benchmark::kMillisecond);

}  // namespace
