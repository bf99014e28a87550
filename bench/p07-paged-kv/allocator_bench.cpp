// Allocator hot paths: the bar is >= 20 million allocate+free pairs
// per second on one core.
#include <benchmark/benchmark.h>

#include <numeric>
#include <vector>

#include "paged_kv/block_allocator.hpp"
#include "paged_kv/prefix_cache.hpp"
#include "paged_kv/sequence.hpp"

namespace {

using namespace paged_kv;

void BM_AllocateFreePair(benchmark::State& state) {
  BlockAllocator pool(4096, 16);
  for (auto _ : state) {
    const auto b = pool.allocate();
    benchmark::DoNotOptimize(b);
    pool.release(*b);
  }
  state.SetItemsProcessed(state.iterations());  // items = allocate+free pairs
}
BENCHMARK(BM_AllocateFreePair);

// A realistic pattern: half the pool live, frees in a different order than allocations.
void BM_AllocateFreeChurn(benchmark::State& state) {
  BlockAllocator pool(4096, 16);
  std::vector<BlockId> live;
  for (int i = 0; i < 2048; ++i) live.push_back(*pool.allocate());
  std::size_t k = 0;
  for (auto _ : state) {
    k = (k * 1103515245 + 12345) & 2047;
    pool.release(live[k]);
    live[k] = *pool.allocate();
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_AllocateFreeChurn);

void BM_AppendTokens(benchmark::State& state) {
  BlockAllocator pool(4096, 16);
  for (auto _ : state) {
    Sequence s(pool);
    for (Token t = 0; t < 2048; ++t) s.append(t);
    benchmark::DoNotOptimize(s.length());
  }
  state.SetItemsProcessed(state.iterations() * 2048);  // items = tokens
}
BENCHMARK(BM_AppendTokens);

void BM_PrefixCacheHit1024(benchmark::State& state) {
  BlockAllocator pool(4096, 16);
  PrefixCache cache(pool);
  std::vector<Token> prompt(1024 + 40);
  std::iota(prompt.begin(), prompt.end(), 0);
  { Admission warm = cache.admit(prompt); }
  for (auto _ : state) {
    Admission a = cache.admit(prompt);
    benchmark::DoNotOptimize(a.cached_tokens);
  }
  state.SetItemsProcessed(state.iterations());  // items = admitted requests
}
BENCHMARK(BM_PrefixCacheHit1024);

}  // namespace
