// Host-side issue cost: what one launch costs the CPU (lock, queue, wake the
// worker, deadlock bookkeeping), and what one op costs inside a replayed
// graph (one lock and one wake-up per stream run, no per-op allocation).
// Each benchmark iteration issues kBatch pipeline iterations back to back;
// only issuing is timed, the zero-duration work drains with timing paused.
// The CPU column is the issuing thread's CPU time, the figure to read on a
// busy machine (the wall time also holds preemption by the worker threads).
#include <benchmark/benchmark.h>

#include "streams/thread_executor.hpp"

namespace {

using namespace streams;

struct Pipeline {
  StreamId in, compute, out;
  std::vector<EventId> copied, computed;
};

Pipeline make_pipeline(Executor& ex, int chunks) {
  Pipeline p{ex.create_stream(), ex.create_stream(), ex.create_stream(), {}, {}};
  for (int c = 0; c < chunks; ++c) {
    p.copied.push_back(ex.create_event());
    p.computed.push_back(ex.create_event());
  }
  return p;
}

// Scenario 1's shape: per chunk three ops, two records, two waits.
void issue(Executor& ex, const Pipeline& p) {
  for (std::size_t c = 0; c < p.copied.size(); ++c) {
    ex.launch(p.in, Op{"h2d", 0, {}});
    ex.record(p.copied[c], p.in);
    ex.wait(p.compute, p.copied[c]);
    ex.launch(p.compute, Op{"kernel", 0, {}});
    ex.record(p.computed[c], p.compute);
    ex.wait(p.out, p.computed[c]);
    ex.launch(p.out, Op{"d2h", 0, {}});
  }
}

constexpr int kChunks = 8;
constexpr int kBatch = 20;
constexpr int kOpsPerIteration = 3 * kChunks * kBatch;

void BM_IssueEager(benchmark::State& state) {
  ThreadExecutor ex;
  const Pipeline p = make_pipeline(ex, kChunks);
  for (auto _ : state) {
    for (int b = 0; b < kBatch; ++b) issue(ex, p);
    state.PauseTiming();
    ex.synchronize();
    state.ResumeTiming();
  }
  state.SetItemsProcessed(state.iterations() * kOpsPerIteration);
  state.SetLabel("one call per op; items = ops");
}
BENCHMARK(BM_IssueEager)->UseRealTime();

void BM_IssueGraph(benchmark::State& state) {
  ThreadExecutor ex;
  const Pipeline p = make_pipeline(ex, kChunks);
  ex.begin_capture();
  issue(ex, p);
  const Graph g = ex.end_capture();
  for (auto _ : state) {
    for (int b = 0; b < kBatch; ++b) ex.launch_graph(g);
    state.PauseTiming();
    ex.synchronize();
    state.ResumeTiming();
  }
  state.SetItemsProcessed(state.iterations() * kOpsPerIteration);
  state.SetLabel("captured once, replayed; items = ops");
}
BENCHMARK(BM_IssueGraph)->UseRealTime();

}  // namespace
