// Extension 3: the trace parser refuses bad input with the line number, and
// the replayer reports what the allocator did at every step.
#include "caching_alloc/trace.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

namespace caching_alloc {
namespace {

std::string error_of(std::string_view text) {
  const auto r = parse_trace(text);
  return r.ok() ? std::string("(parsed)") : r.error().message;
}

// Excel's CSV export starts with a UTF-8 byte-order mark; the header still reads as a header.
TEST(TraceParser, AcceptsAByteOrderMarkBeforeTheHeader) {
  const auto r = parse_trace("\xEF\xBB\xBFop,id,size,stream\nalloc,a,1024,0\n");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r.value().size(), 1u);
  EXPECT_EQ(error_of("alloc,a,1024,0\n\xEF\xBB\xBF" "free,a,,\n").find("line 2"), 0u)
      << "a mark anywhere but the start is still an error";
}

TEST(TraceParser, AcceptsHeaderCommentsBlanksAndCrlf) {
  const auto r = parse_trace("op,id,size,stream\r\n# comment\n\nalloc, a ,1024,0\r\nfree,a,,\n");
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r.value().size(), 2u);
  EXPECT_EQ(r.value()[0].id, "a");
  EXPECT_EQ(r.value()[0].line, 4u);
  EXPECT_EQ(r.value()[1].op, TraceOp::kFree);
  EXPECT_EQ(r.value()[1].size, 1024u) << "a free learns its size from the alloc";
}

TEST(TraceParser, ErrorsNameTheLine) {
  EXPECT_EQ(error_of("alloc,a,1024\n"),
            "line 1: expected 4 comma-separated fields op,id,size,stream, got 3");
  EXPECT_EQ(error_of("alloc,a,1,0\nmalloc,b,1,0\n"),
            "line 2: unknown op 'malloc' (expected alloc or free)");
  EXPECT_EQ(error_of("alloc,a,12k,0\n"),
            "line 1: size '12k' is not a byte count between 1 and 2^48");
  EXPECT_EQ(error_of("alloc,a,0,0\n"), "line 1: size '0' is not a byte count between 1 and 2^48");
  EXPECT_EQ(error_of("alloc,a,-5,0\n"), "line 1: size '-5' is not a byte count between 1 and 2^48");
  EXPECT_EQ(error_of("alloc,a,99999999999999999999999,0\n"),
            "line 1: size '99999999999999999999999' is not a byte count between 1 and 2^48");
  EXPECT_EQ(error_of("alloc,a,1,x\n"),
            "line 1: stream 'x' is not an integer between 0 and 4294967295");
  EXPECT_EQ(error_of("alloc,,1,0\n"), "line 1: empty id");
  EXPECT_EQ(error_of("alloc,a,,0\n"), "line 1: alloc needs a size");
  EXPECT_EQ(error_of(std::string_view("\x01\xff,a,1,0\n", 9)),
            "line 1: unknown op '\\x01\\xff' (expected alloc or free)")
      << "binary garbage is shown escaped, never raw";
}

TEST(TraceParser, LifetimeErrors) {
  EXPECT_EQ(error_of("alloc,a,1,0\nfree,b,,\n"), "line 2: free of unknown id 'b'");
  EXPECT_EQ(error_of("alloc,a,1,0\nfree,a,,\nfree,a,,\n"),
            "line 3: double free of id 'a' (already freed on line 2)");
  EXPECT_EQ(error_of("alloc,a,1,0\nalloc,a,1,0\n"),
            "line 2: id 'a' is still live (allocated on line 1)");
  EXPECT_EQ(error_of("alloc,a,1,0\nfree,a,2,0\n"),
            "line 2: free of 'a' gives size 2, but it was allocated with 1 (line 1)");
  // An id may be reused once freed.
  EXPECT_TRUE(parse_trace("alloc,a,1,0\nfree,a,,\nalloc,a,1,0\n").ok());
}

TEST(TraceReplay, SampleTraceFigures) {
  std::ifstream in(std::string(GPULAB_LAB_DIR) + "/traces/sample.csv");
  ASSERT_TRUE(in) << "sample trace missing";
  std::stringstream buf;
  buf << in.rdbuf();
  const auto events = parse_trace(buf.str());
  ASSERT_TRUE(events.ok()) << events.error().message;
  const ReplayResult r = replay_trace(events.value(), 1024 * kMiB, AllocatorConfig{});
  ASSERT_EQ(r.steps.size(), events.value().size());
  // Step 1: 12 MiB gets its own exact segment; step 2: 1.2 MiB splits a 20 MiB one.
  EXPECT_EQ(r.steps[0].reserved, 12 * kMiB);
  EXPECT_EQ(r.steps[1].reserved, 32 * kMiB);
  EXPECT_EQ(r.steps[1].largest_cached, 20 * kMiB - 1258496);
  for (const ReplayStep& s : r.steps) {
    EXPECT_GE(s.reserved, s.allocated);
    EXPECT_EQ(s.cached, s.reserved - s.allocated);
  }
  EXPECT_EQ(r.stats.cross_stream_syncs, 2u);
  EXPECT_EQ(r.stats.device_frees, 0u);
}

TEST(TraceReplay, OomIsAStepNotACrash) {
  const auto events = parse_trace("alloc,a,40000000,0\nalloc,b,40000000,0\nfree,b,,\nfree,a,,\n");
  ASSERT_TRUE(events.ok());
  const ReplayResult r = replay_trace(events.value(), 64 * kMiB, AllocatorConfig{});
  EXPECT_FALSE(r.steps[0].oom);
  EXPECT_TRUE(r.steps[1].oom);
  EXPECT_TRUE(r.steps[2].skipped);
  EXPECT_EQ(r.stats.ooms, 1u);
  EXPECT_EQ(r.steps[3].allocated, 0u);
}

}  // namespace
}  // namespace caching_alloc
