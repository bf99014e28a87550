// Stream and event semantics, asserted exactly in virtual time.
#include "streams/virtual_executor.hpp"

#include <gtest/gtest.h>

#include <string>

namespace streams {
namespace {

const Span& span_named(const VirtualExecutor& ex, const std::string& name) {
  for (const Span& s : ex.timeline()) {
    if (s.name == name) return s;
  }
  throw std::runtime_error("no span " + name);
}

TEST(VirtualExecutor, OneStreamRunsInIssueOrderTwoStreamsOverlap) {
  VirtualExecutor ex;
  const StreamId a = ex.create_stream();
  const StreamId b = ex.create_stream();
  ex.launch(a, Op{"a1", 10, {}});
  ex.launch(a, Op{"a2", 5, {}});
  ex.launch(b, Op{"b1", 7, {}});
  ex.synchronize();
  EXPECT_DOUBLE_EQ(span_named(ex, "a2").start_ms, 10);
  EXPECT_DOUBLE_EQ(span_named(ex, "b1").start_ms, 0) << "different streams have no order";
  EXPECT_DOUBLE_EQ(ex.now_ms(), 15);
}

TEST(VirtualExecutor, EventEdgeOrdersStreams) {
  VirtualExecutor ex;
  const StreamId a = ex.create_stream();
  const StreamId b = ex.create_stream();
  const EventId e = ex.create_event();
  ex.launch(a, Op{"producer", 10, {}});
  ex.record(e, a);
  ex.launch(a, Op{"after record", 10, {}});
  ex.wait(b, e);
  ex.launch(b, Op{"consumer", 1, {}});
  ex.synchronize();
  EXPECT_DOUBLE_EQ(span_named(ex, "consumer").start_ms, 10)
      << "waits for the record, not for the whole stream";
  EXPECT_TRUE(ex.query(e));
}

TEST(VirtualExecutor, WaitOnNeverRecordedEventIsANoOp) {
  VirtualExecutor ex;
  const StreamId a = ex.create_stream();
  const EventId e = ex.create_event();
  ex.wait(a, e);
  ex.launch(a, Op{"k", 3, {}});
  ex.synchronize();
  EXPECT_DOUBLE_EQ(span_named(ex, "k").start_ms, 0);
}

TEST(VirtualExecutor, LegacyDefaultStreamSerialisesExplicitStreams) {
  for (const DefaultStream mode : {DefaultStream::kLegacy, DefaultStream::kPerThread}) {
    VirtualExecutor ex(mode);
    const StreamId a = ex.create_stream();
    const StreamId b = ex.create_stream();
    const StreamId nb = ex.create_stream(StreamOptions{0, std::nullopt, false});  // non-blocking
    ex.launch(a, Op{"a", 10, {}});
    ex.launch(nb, Op{"non-blocking", 10, {}});
    ex.launch(Executor::kDefaultStream, Op{"default", 5, {}});
    ex.launch(b, Op{"b", 10, {}});
    ex.synchronize();
    if (mode == DefaultStream::kLegacy) {
      EXPECT_DOUBLE_EQ(span_named(ex, "default").start_ms, 10)
          << "waits for all prior blocking work";
      EXPECT_DOUBLE_EQ(span_named(ex, "b").start_ms, 15) << "later blocking work waits for it";
      EXPECT_DOUBLE_EQ(ex.now_ms(), 25);
    } else {
      EXPECT_DOUBLE_EQ(span_named(ex, "default").start_ms, 0);
      EXPECT_DOUBLE_EQ(span_named(ex, "b").start_ms, 0);
      EXPECT_DOUBLE_EQ(ex.now_ms(), 10);
    }
    EXPECT_DOUBLE_EQ(span_named(ex, "non-blocking").start_ms, 0)
        << "cudaStreamNonBlocking is exempt";
  }
}

TEST(VirtualExecutor, EngineSlotsGoByPriorityThenArrival) {
  VirtualExecutor ex;
  const EngineId engine = ex.create_engine(1);
  const StreamId low = ex.create_stream(StreamOptions{0, engine, true});
  const StreamId high = ex.create_stream(StreamOptions{-1, engine, true});
  ex.launch(low, Op{"low1", 10, {}});
  ex.launch(low, Op{"low2", 10, {}});
  ex.launch(high, Op{"high", 1, {}});
  ex.synchronize();
  EXPECT_DOUBLE_EQ(span_named(ex, "high").start_ms, 0);
  EXPECT_DOUBLE_EQ(span_named(ex, "low1").start_ms, 1);
  EXPECT_DOUBLE_EQ(span_named(ex, "low2").start_ms, 11);
}

TEST(VirtualExecutor, OpsRunTheirCallableAtTheirStart) {
  VirtualExecutor ex;
  const StreamId a = ex.create_stream();
  double seen = -1;
  ex.launch(a, Op{"first", 4, {}});
  ex.launch(a, Op{"second", 1, [&] { seen = ex.now_ms(); }});
  ex.synchronize();
  EXPECT_DOUBLE_EQ(seen, 4);
}

TEST(VirtualExecutor, BadIdsAreRejected) {
  VirtualExecutor ex;
  EXPECT_THROW(ex.launch(99, Op{}), std::invalid_argument);
  EXPECT_THROW(ex.record(99, 0), std::invalid_argument);
  EXPECT_THROW(ex.launch(0, Op{"negative", -1, {}}), std::invalid_argument);
  EXPECT_THROW((void)ex.create_engine(0), std::invalid_argument);
}

}  // namespace
}  // namespace streams
