#include "streams/extensions.hpp"

#include <algorithm>
#include <functional>
#include <mutex>

#include "caching_alloc/device.hpp"
#include "gpulab/stats.hpp"
#include "gpulab/timing.hpp"
#include "streams/stream_ordered_allocator.hpp"
#include "streams/thread_executor.hpp"

namespace streams {

IssuePipeline make_issue_pipeline(Executor& ex, int chunks) {
  IssuePipeline p{ex.create_stream(), ex.create_stream(), ex.create_stream(), {}, {}};
  for (int c = 0; c < chunks; ++c) {
    p.copied.push_back(ex.create_event());
    p.computed.push_back(ex.create_event());
  }
  return p;
}

void issue_pipeline_iteration(Executor& ex, const IssuePipeline& p) {
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

IssueCost measure_issue_cost(int chunks, int repetitions) {
  ThreadExecutor ex;
  const IssuePipeline p = make_issue_pipeline(ex, chunks);
  ex.begin_capture();
  issue_pipeline_iteration(ex, p);
  const Graph graph = ex.end_capture();

  std::vector<double> eager;
  std::vector<double> replay;
  for (int rep = 0; rep < repetitions + 1; ++rep) {  // repetition 0 warms up
    gpulab::Stopwatch sw;
    issue_pipeline_iteration(ex, p);
    const double e = sw.seconds();
    ex.synchronize();
    sw.restart();
    ex.launch_graph(graph);
    const double g = sw.seconds();
    ex.synchronize();
    if (rep > 0) {
      eager.push_back(e);
      replay.push_back(g);
    }
  }
  IssueCost r;
  r.ops_per_iteration = static_cast<int>(graph.ops());
  r.nodes_per_iteration = static_cast<int>(graph.size());
  r.eager_ns_per_op = gpulab::median(eager) * 1e9 / r.ops_per_iteration;
  r.graph_ns_per_op = gpulab::median(replay) * 1e9 / r.ops_per_iteration;
  r.ratio = r.graph_ns_per_op > 0 ? r.eager_ns_per_op / r.graph_ns_per_op : 0;
  return r;
}

std::vector<CaptureRejection> capture_rejections() {
  std::vector<CaptureRejection> out;
  const auto attempt = [&](std::string what,
                           const std::function<void(Executor&, StreamId, EventId)>& body) {
    ThreadExecutor ex;
    const StreamId s = ex.create_stream();
    const EventId outside = ex.create_event();
    ex.launch(s, Op{"before", 0, {}});
    ex.record(outside, s);
    ex.begin_capture();
    ex.launch(s, Op{"captured kernel", 0, {}});
    std::string error = "(accepted)";
    try {
      body(ex, s, outside);
    } catch (const CaptureError& e) {
      error = e.what();
    }
    (void)ex.end_capture();
    ex.synchronize();
    out.push_back({std::move(what), std::move(error)});
  };
  attempt("host synchronize inside the region",
          [](Executor& ex, StreamId, EventId) { ex.synchronize(); });
  attempt("data-dependent branch (query an event, decide on the host)",
          [](Executor& ex, StreamId, EventId e) { (void)ex.query(e); });
  attempt("allocate memory inside the region", [](Executor& ex, StreamId s, EventId) {
    caching_alloc::Device dev(64 * caching_alloc::kMiB);
    StreamOrderedAllocator pool(ex, dev);
    (void)pool.allocate(4096, s);
  });
  attempt("wait on an event recorded before the capture",
          [](Executor& ex, StreamId s, EventId e) { ex.wait(s, e); });
  return out;
}

PriorityResult priority_demo(Clock clock) {
  const auto run = [&](int latency_priority, double& latency_done, double& bulk_done) {
    auto ex = make_executor(clock, DefaultStream::kPerThread);
    const EngineId sms = ex->create_engine(1);
    std::vector<StreamId> bulk;
    for (int i = 0; i < 3; ++i) bulk.push_back(ex->create_stream(StreamOptions{0, sms, true}));
    const StreamId urgent = ex->create_stream(StreamOptions{latency_priority, sms, true});
    const double t0 = ex->now_ms();
    std::mutex m;
    double latency_at = 0;
    double bulk_at = 0;
    Executor* exp = ex.get();
    for (int op = 0; op < 4; ++op) {
      for (const StreamId s : bulk) {
        ex->launch(s, Op{"bulk", 50, {}});
      }
    }
    // Completion times are taken on a stream outside the engine, released by
    // events, so measuring does not itself queue for the engine.
    const StreamId clock_stream = ex->create_stream();
    const auto mark_after = [&](StreamId s, double& at) {
      const EventId done = ex->create_event();
      ex->record(done, s);
      ex->wait(clock_stream, done);
      ex->launch(clock_stream, Op{"mark", 0, [&m, &at, exp] {
                                    std::lock_guard lock(m);
                                    at = std::max(at, exp->now_ms());
                                  }});
    };
    ex->launch(urgent, Op{"latency-sensitive", 2, {}});
    mark_after(urgent, latency_at);
    for (const StreamId s : bulk) mark_after(s, bulk_at);
    ex->synchronize();
    std::lock_guard lock(m);
    latency_done = latency_at - t0;
    bulk_done = bulk_at - t0;
  };
  PriorityResult r;
  run(-1, r.latency_op_done_ms, r.bulk_done_ms);
  run(0, r.latency_op_done_fifo_ms, r.bulk_done_fifo_ms);
  // Non-preemptive: at most the one bulk op already running may finish first.
  r.pass = r.latency_op_done_ms < r.latency_op_done_fifo_ms && r.latency_op_done_ms < 100;
  return r;
}

}  // namespace streams
