// Host-side issue cost: what one launch costs the CPU (lock, queue, wake the
// worker, deadlock bookkeeping), and what one op costs inside a replayed
// graph (one lock and one wake-up per stream run, no per-op allocation).
// Each benchmark iteration issues kBatch pipeline iterations back to back;
// only issuing is timed, the zero-duration work drains with timing paused.
// The CPU column is the issuing thread's CPU time, the figure to read on a
// busy machine (the wall time also holds preemption by the worker threads).
#include <benchmark/benchmark.h>

#include "streams/extensions.hpp"
#include "streams/thread_executor.hpp"

namespace {

using namespace streams;

constexpr int kChunks = 8;
constexpr int kBatch = 20;
constexpr int kOpsPerIteration = 3 * kChunks * kBatch;

void BM_IssueEager(benchmark::State& state) {
  ThreadExecutor ex;
  const IssuePipeline p = make_issue_pipeline(ex, kChunks);
  for (auto _ : state) {
    for (int b = 0; b < kBatch; ++b) issue_pipeline_iteration(ex, p);
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
  const IssuePipeline p = make_issue_pipeline(ex, kChunks);
  ex.begin_capture();
  issue_pipeline_iteration(ex, p);
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
