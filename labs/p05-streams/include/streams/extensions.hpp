// Extensions 1 and 2 of the scheduler lab: graph capture/replay with its
// issue-cost saving and its restrictions, and priority streams on a shared engine.
#pragma once

#include <string>
#include <vector>

#include "streams/scenarios.hpp"

namespace streams {

// Scenario 1's shape with zero durations, for measuring issue cost alone:
// per chunk three ops, two records and two waits on three streams.
struct IssuePipeline {
  StreamId in = 0, compute = 0, out = 0;
  std::vector<EventId> copied, computed;
};
IssuePipeline make_issue_pipeline(Executor& ex, int chunks);
void issue_pipeline_iteration(Executor& ex, const IssuePipeline& p);

// Host-side issue cost of a scenario-1 sequence (`chunks` x 3 ops plus their
// event edges), issued op by op vs replayed as one captured graph. Only the
// issuing is timed; the zero-duration work drains untimed in between.
struct IssueCost {
  int ops_per_iteration = 0;
  int nodes_per_iteration = 0;  // ops + records + waits
  double eager_ns_per_op = 0;   // medians over repetitions
  double graph_ns_per_op = 0;
  double ratio = 0;  // eager / graph
};
IssueCost measure_issue_cost(int chunks, int repetitions);

// What a capture refuses, each with the error the learner would see.
struct CaptureRejection {
  std::string attempt;
  std::string error;
};
std::vector<CaptureRejection> capture_rejections();

// Three bulk streams (4 x 50 ms each) and one latency-sensitive 2 ms op share
// an engine with one slot. With priority the latency stream is served first.
struct PriorityResult {
  double latency_op_done_ms = 0;       // with the latency stream at priority -1
  double latency_op_done_fifo_ms = 0;  // all streams at priority 0
  double bulk_done_ms = 0;
  double bulk_done_fifo_ms = 0;
  bool pass = false;  // latency op done before the first bulk stream's work, and sooner than FIFO
};
PriorityResult priority_demo(Clock clock);

}  // namespace streams
