// Extension 1: capture, replay, and what capture refuses.
#include <gtest/gtest.h>

#include <atomic>

#include "caching_alloc/device.hpp"
#include "streams/extensions.hpp"
#include "streams/stream_ordered_allocator.hpp"
#include "streams/thread_executor.hpp"
#include "streams/virtual_executor.hpp"

namespace streams {
namespace {

TEST(Graph, CaptureRunsNothingReplayRunsEverythingEveryTime) {
  VirtualExecutor ex;
  const StreamId a = ex.create_stream();
  const StreamId b = ex.create_stream();
  const EventId e = ex.create_event();
  int runs = 0;
  ex.begin_capture();
  ex.launch(a, Op{"produce", 10, [&] { ++runs; }});
  ex.record(e, a);
  ex.wait(b, e);
  ex.launch(b, Op{"consume", 5, [&] { ++runs; }});
  const Graph g = ex.end_capture();
  ex.synchronize();
  EXPECT_EQ(runs, 0);
  EXPECT_EQ(g.ops(), 2u);
  EXPECT_EQ(g.size(), 4u);
  for (int i = 0; i < 3; ++i) {
    ex.launch_graph(g);
    ex.synchronize();
  }
  EXPECT_EQ(runs, 6);
  EXPECT_DOUBLE_EQ(ex.now_ms(), 45) << "each replay keeps the captured edge: 10 + 5";
  EXPECT_EQ(ex.issued_records(e), 3u) << "event values are rebased at every launch";
}

TEST(Graph, ReplayOnThreadsKeepsOrder) {
  ThreadExecutor ex;
  const StreamId a = ex.create_stream();
  const StreamId b = ex.create_stream();
  const EventId e = ex.create_event();
  std::atomic<int> produced{0};
  std::atomic<int> violations{0};
  ex.begin_capture();
  ex.launch(a, Op{"produce", 0, [&] { produced.fetch_add(1); }});
  ex.record(e, a);
  ex.wait(b, e);
  ex.launch(b, Op{"consume", 0, [&] { violations.fetch_add(produced.load() == 0 ? 1 : 0); }});
  const Graph g = ex.end_capture();
  for (int i = 0; i < 50; ++i) ex.launch_graph(g);
  ex.synchronize();
  EXPECT_EQ(produced.load(), 50);
  EXPECT_EQ(violations.load(), 0);
}

TEST(Graph, CaptureRefusesWhatCannotBeFrozen) {
  const auto rejected = capture_rejections();
  ASSERT_EQ(rejected.size(), 4u);
  EXPECT_NE(rejected[0].error.find("synchronize() during capture"), std::string::npos);
  EXPECT_NE(rejected[1].error.find("data-dependent"), std::string::npos);
  EXPECT_NE(rejected[2].error.find("allocate() during capture"), std::string::npos);
  EXPECT_NE(rejected[3].error.find("outside the capture"), std::string::npos);
}

TEST(Graph, EventCreatedDuringCaptureWorks) {
  VirtualExecutor ex;
  const StreamId a = ex.create_stream();
  const StreamId b = ex.create_stream();
  ex.begin_capture();
  const EventId e = ex.create_event();
  ex.launch(a, Op{"produce", 3, {}});
  ex.record(e, a);
  ex.wait(b, e);
  ex.launch(b, Op{"consume", 1, {}});
  const Graph g = ex.end_capture();
  ex.launch_graph(g);
  ex.synchronize();
  EXPECT_DOUBLE_EQ(ex.now_ms(), 4);
}

TEST(Graph, LegacyDefaultStreamCannotBeCaptured) {
  VirtualExecutor ex(DefaultStream::kLegacy);
  ex.begin_capture();
  EXPECT_THROW(ex.launch(Executor::kDefaultStream, Op{}), CaptureError);
  (void)ex.end_capture();
  EXPECT_THROW((void)ex.end_capture(), CaptureError);
}

TEST(Graph, IssueCostIsMeasuredForBothPaths) {
  // Only that both paths were measured; which is faster is a benchmark's job.
  const IssueCost c = measure_issue_cost(4, 5);
  EXPECT_EQ(c.ops_per_iteration, 12);
  EXPECT_EQ(c.nodes_per_iteration, 12 + 8 + 8);
  EXPECT_GT(c.eager_ns_per_op, 0);
  EXPECT_GT(c.graph_ns_per_op, 0);
}

TEST(Priority, LatencyOpFinishesAheadOfBulkWork) {
  const PriorityResult r = priority_demo(Clock::kVirtual);
  EXPECT_DOUBLE_EQ(r.latency_op_done_ms, 2);
  EXPECT_DOUBLE_EQ(r.latency_op_done_fifo_ms, 152)
      << "behind the three bulk heads that asked first";
  EXPECT_DOUBLE_EQ(r.bulk_done_ms, 602);
  EXPECT_DOUBLE_EQ(r.bulk_done_fifo_ms, 602) << "priority reorders, it does not add work";
  EXPECT_TRUE(r.pass);
}

TEST(StreamOrderedAllocator, CrossStreamReuseWaitsForTheFreePoint) {
  VirtualExecutor ex;
  caching_alloc::Device dev(64 * caching_alloc::kMiB);
  StreamOrderedAllocator pool(ex, dev);
  const StreamId a = ex.create_stream();
  const StreamId c = ex.create_stream();
  const auto buf = pool.allocate(4096, a);
  ex.launch(a, Op{"reader", 20, {}});
  pool.free(buf.addr, a);  // host returns immediately; the block lives until `a` gets here
  const auto again = pool.allocate(4096, c);
  EXPECT_EQ(again.addr, buf.addr);
  ex.launch(c, Op{"writer", 1, {}});
  ex.synchronize();
  EXPECT_EQ(pool.edges_inserted(), 1u);
  EXPECT_EQ(pool.allocator().stats().cross_stream_syncs, 1u);
  for (const Span& s : ex.timeline()) {
    if (s.name == std::string("writer")) {
      EXPECT_DOUBLE_EQ(s.start_ms, 20) << "the writer waited for the reader";
    }
  }
}

TEST(StreamOrderedAllocator, SameStreamReuseNeedsNoEdge) {
  VirtualExecutor ex;
  caching_alloc::Device dev(64 * caching_alloc::kMiB);
  StreamOrderedAllocator pool(ex, dev);
  const StreamId a = ex.create_stream();
  const auto buf = pool.allocate(4096, a);
  pool.free(buf.addr, a);
  EXPECT_EQ(pool.allocate(4096, a).addr, buf.addr);
  EXPECT_EQ(pool.edges_inserted(), 0u);
  EXPECT_THROW(pool.free(12345, a), std::invalid_argument);
}

}  // namespace
}  // namespace streams
