// Extension 3: the wait-for graph rejects cycles when they are issued.
#include <gtest/gtest.h>

#include "streams/thread_executor.hpp"
#include "streams/virtual_executor.hpp"
#include "streams/wait_for_graph.hpp"

namespace streams {
namespace {

TEST(WaitForGraph, KeepsNoHistoryWhileNothingIsPending) {
  WaitForGraph g;
  for (int i = 0; i < 1000; ++i) {
    g.add_op(1);
    g.add_record(1, 0, static_cast<std::uint64_t>(i + 1));
    g.add_wait(2, 0, static_cast<std::uint64_t>(i + 1), true);
  }
  EXPECT_EQ(g.nodes(), 0u);
  EXPECT_EQ(g.pending_waits(), 0u);
}

TEST(WaitForGraph, StreamWaitingForItsOwnLaterRecordIsACycle) {
  VirtualExecutor ex;
  const StreamId s = ex.create_stream();
  const EventId e = ex.create_event();
  ex.wait_value(s, e, 1);
  EXPECT_THROW(ex.record(e, s), DeadlockError);
  EXPECT_EQ(ex.issued_records(e), 0u) << "a rejected record changes nothing";
}

TEST(WaitForGraph, ThreeStreamCycleThroughBoundEdges) {
  VirtualExecutor ex;
  const StreamId s1 = ex.create_stream();
  const StreamId s2 = ex.create_stream();
  const StreamId s3 = ex.create_stream();
  const EventId e1 = ex.create_event();
  const EventId e2 = ex.create_event();
  const EventId e3 = ex.create_event();
  ex.wait_value(s1, e3, 1);  // pending
  ex.record(e1, s1);
  ex.wait(s2, e1);
  ex.record(e2, s2);
  ex.wait(s3, e2);
  EXPECT_THROW(ex.record(e3, s3), DeadlockError);
}

TEST(WaitForGraph, FutureWaitSatisfiedLaterIsAccepted) {
  VirtualExecutor ex;
  const StreamId s1 = ex.create_stream();
  const StreamId s2 = ex.create_stream();
  const EventId e = ex.create_event();
  ex.wait_value(s1, e, 1);
  ex.launch(s1, Op{"after", 1, {}});
  EXPECT_THROW(ex.synchronize(), std::runtime_error) << "synchronize refuses to wait forever";
  ex.launch(s2, Op{"producer", 5, {}});
  ex.record(e, s2);
  ex.synchronize();
  EXPECT_DOUBLE_EQ(ex.now_ms(), 6);
}

TEST(WaitForGraph, ThreadExecutorDestructorReleasesAnOrphanWait) {
  // A rejected cycle leaves a stream blocked on a value nobody will record;
  // destroying the executor must still drain and join, not hang.
  ThreadExecutor ex;
  const StreamId s1 = ex.create_stream();
  const StreamId s2 = ex.create_stream();
  const EventId e1 = ex.create_event();
  const EventId e2 = ex.create_event();
  ex.wait_value(s1, e2, 1);
  ex.record(e1, s1);
  ex.wait_value(s2, e1, 1);
  EXPECT_THROW(ex.record(e2, s2), DeadlockError);
}

}  // namespace
}  // namespace streams
