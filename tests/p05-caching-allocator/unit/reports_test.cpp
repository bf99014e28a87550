// caching-alloc's reports without the program: the text is the README's, the
// JSON carries the same numbers, and one replay loop serves replay and metrics.
#include "caching_alloc/reports.hpp"

#include <gtest/gtest.h>

#include <string>

#include "caching_alloc/replay.hpp"
#include "gpulab/errors.hpp"

namespace caching_alloc {
namespace {

bool has(const std::string& text, const std::string& what) {
  return text.find(what) != std::string::npos;
}

std::vector<TraceEvent> events_of(const std::string& csv) {
  auto parsed = parse_trace(csv);
  EXPECT_TRUE(parsed.ok());
  return std::move(parsed).value();
}

const std::string kTrace =
    "alloc,a,4194304,0\nalloc,b,1048576,0\nfree,a,,\nalloc,c,4194304,1\nalloc,d,2097152,0\n";

TEST(Reports, DemosTeachBothLessons) {
  const DemosReport r = run_demos();
  EXPECT_TRUE(r.pass());
  const std::string text = render(r);
  EXPECT_TRUE(has(text, "interleaved (mixed)")) << text;
  EXPECT_TRUE(has(text, "16MB alloc: FAILS (fragmented!)\n")) << text;
  EXPECT_TRUE(has(text, "1 device mallocs")) << text;
  EXPECT_FALSE(has(text, "FAIL demo")) << text;
  EXPECT_EQ(to_json(r)["demo2"]["caching"]["device_mallocs"], 1);
}

TEST(Reports, DemosPrintEachFailure) {
  DemosReport r = run_demos();
  r.failures = {"demo 2: the cache did not absorb the churn"};
  EXPECT_FALSE(r.pass());
  EXPECT_TRUE(has(render(r), "FAIL demo 2: the cache did not absorb the churn\n"));
}

TEST(Reports, ReplayRowsAndTotals) {
  const ReplayReport r{"t.csv", replay_trace(events_of(kTrace), 64 * kMiB, {})};
  ASSERT_EQ(r.result.steps.size(), 5U);
  const std::string text = render(r);
  EXPECT_TRUE(has(text, "device malloc")) << text;
  EXPECT_TRUE(has(text, "bin hit, cross-stream")) << text;
  EXPECT_TRUE(has(text, "cross-stream syncs 1\n")) << text;
  const gpulab::Json j = to_json(r);
  EXPECT_EQ(j["trace"], "t.csv");
  EXPECT_EQ(j["steps"].size(), 5U);
  EXPECT_EQ(j["steps"][3]["cross_stream"], true);
  EXPECT_EQ(replay_plot(r).series.size(), 4U);
}

// metrics and replay run the same loop, so their end states agree.
TEST(Reports, MetricsEndStateIsTheReplaysLastStep) {
  const auto events = events_of(kTrace);
  const ReplayResult replay = replay_trace(events, 64 * kMiB, {});
  const MetricsReport m = run_metrics(events, 64 * kMiB, {});
  EXPECT_EQ(m.stats.reserved_bytes, replay.steps.back().reserved);
  EXPECT_EQ(m.largest_cached, replay.steps.back().largest_cached);
  EXPECT_EQ(m.device_largest_hole, replay.steps.back().device_largest_hole);
  EXPECT_EQ(m.stats.cross_stream_syncs, replay.stats.cross_stream_syncs);
  EXPECT_TRUE(has(render(m), "# TYPE gpulab_allocator_reserved_bytes gauge\n"));
  EXPECT_EQ(to_json(m)["allocated_bytes"], m.stats.allocated_bytes);
}

// A free of an allocation that ran out of memory is a skipped step.
TEST(Reports, FreeOfAFailedAllocIsSkipped) {
  Device dev(4 * kMiB);
  CachingAllocator alloc(dev, {});
  std::vector<ReplayStep> steps;
  replay_events(alloc, events_of("alloc,big,67108864,0\nfree,big,,\n"),
                [&](const ReplayStep& s) { steps.push_back(s); });
  ASSERT_EQ(steps.size(), 2U);
  EXPECT_TRUE(steps[0].oom);
  EXPECT_TRUE(steps[1].skipped);
}

TEST(Reports, FitAndSawtoothRender) {
  const FitReport fit = run_fit({}, 1, 200);
  ASSERT_EQ(fit.rows.size(), 4U);
  const std::string ft = render(fit);
  EXPECT_TRUE(has(ft, "demo-1 shape on a 256 MiB device: 200 allocations")) << ft;
  EXPECT_TRUE(has(ft, "(seed 1, no coalescing)")) << ft;
  EXPECT_EQ(to_json(fit)["results"][3]["fit"], "best-fit");

  AllocatorConfig c;
  c.coalesce = true;
  const SawtoothReport saw = run_sawtooth_report(c, 3);
  ASSERT_EQ(saw.policies.size(), 3U);
  EXPECT_TRUE(has(render(saw), "evaluation burst (coalescing)\n"));
  EXPECT_EQ(to_json(saw)["policies"][0]["reserved_mib_per_iteration"].size(), 40U);
  EXPECT_EQ(sawtooth_plot(saw).series.size(), 3U);
}

TEST(Reports, TraceFileIsReadUnderTheCap) {
  auto error_of = [](const std::string& path) -> std::string {
    try {
      load_trace_file(path);
    } catch (const gpulab::UsageError& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_EQ(error_of("/"), "'/' is a directory, not a file");
  EXPECT_EQ(error_of("/dev/zero"), "'/dev/zero' is a device, not a file");
  EXPECT_EQ(error_of("/nonexistent/t.csv"),
            "cannot open '/nonexistent/t.csv': No such file or directory");
}

}  // namespace
}  // namespace caching_alloc
