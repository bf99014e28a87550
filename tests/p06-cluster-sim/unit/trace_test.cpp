// Trace parsing: every malformed row is reported with its line, and the
// generator is a pure function of its seed.
#include <gtest/gtest.h>

#include <sstream>

#include "cluster_sim/simulator.hpp"
#include "cluster_sim/trace.hpp"
#include "gpulab/errors.hpp"

namespace cs = cluster_sim;

namespace {

std::string error_of(const std::string& text) {
  std::istringstream in(text);
  try {
    cs::parse_trace(in, "t.csv");
  } catch (const gpulab::UsageError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(Trace, ParsesHeaderCommentsAndOptionalColumns) {
  std::istringstream in(
      "# comment\nid,arrival,gpus,duration,priority,tenant,cpus\n\nA,0,2,10\nB, 5.5 ,4,20,1,ml,16\n");
  const auto jobs = cs::parse_trace(in, "t.csv");
  ASSERT_EQ(jobs.size(), 2u);
  EXPECT_EQ(jobs[0].tenant, "default");
  EXPECT_EQ(jobs[0].line, 4);
  EXPECT_DOUBLE_EQ(jobs[1].arrival, 5.5);
  EXPECT_EQ(jobs[1].priority, 1);
  EXPECT_EQ(jobs[1].tenant, "ml");
  EXPECT_EQ(jobs[1].cpus, 16);
}

TEST(Trace, ReportsTheLineOfEachKindOfBadRow) {
  EXPECT_EQ(error_of("A,0,2\n"), "t.csv:1: expected id,arrival,gpus,duration[,priority,tenant,cpus], got 3 fields");
  EXPECT_EQ(error_of("A,0,2,10\nB,-1,2,10\n"), "t.csv:2: arrival must be a number >= 0, got '-1'");
  EXPECT_EQ(error_of("A,0,0,10\n"), "t.csv:1: gpus must be a whole number >= 1, got '0'");
  EXPECT_EQ(error_of("A,0,2.5,10\n"), "t.csv:1: gpus must be a whole number >= 1, got '2.5'");
  EXPECT_EQ(error_of("A,0,2,0\n"), "t.csv:1: duration must be a number > 0, got '0'");
  EXPECT_EQ(error_of("A,0,2,abc\n"), "t.csv:1: duration must be a number > 0, got 'abc'");
  EXPECT_EQ(error_of("A,0,2,10,high\n"), "t.csv:1: priority must be a whole number, got 'high'");
  EXPECT_EQ(error_of("A,0,2,10,0,t,-4\n"), "t.csv:1: cpus must be a whole number >= 0, got '-4'");
  EXPECT_EQ(error_of("A,0,2,10\nA,1,2,10\n"), "t.csv:2: duplicate job id 'A'");
  EXPECT_EQ(error_of(",0,2,10\n"), "t.csv:1: empty job id");
  EXPECT_EQ(error_of("# only a comment\n"), "t.csv: the trace has no jobs");
  EXPECT_EQ(error_of("A,0,2,10\nid,arrival,gpus,duration\n"), "t.csv:2: arrival must be a number >= 0, got 'arrival'");
}

TEST(Trace, AJobTooBigForTheClusterNamesItsLine) {
  std::istringstream in("A,0,2,10\nB,0,40,10\n");
  const auto jobs = cs::parse_trace(in, "t.csv");
  cs::SimConfig cfg;  // 4 x 8 = 32 GPUs
  try {
    cs::simulate(jobs, cfg);
    FAIL() << "expected a UsageError";
  } catch (const gpulab::UsageError& e) {
    EXPECT_STREQ(e.what(), "trace line 2: job B needs 40 GPUs but the cluster has 32");
  }
}

TEST(Trace, MissingFileIsAUsageError) {
  EXPECT_THROW(cs::load_trace("/nonexistent/trace.csv"), gpulab::UsageError);
}

TEST(Trace, WrittenTracesParseBackToTheSameJobs) {
  cs::GeneratorConfig g;
  g.jobs = 200;
  const auto jobs = cs::generate_trace(g);
  std::stringstream buf;
  cs::write_trace(buf, jobs);
  const auto back = cs::parse_trace(buf, "round-trip");
  ASSERT_EQ(back.size(), jobs.size());
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    EXPECT_EQ(back[i].id, jobs[i].id);
    EXPECT_EQ(back[i].gpus, jobs[i].gpus);
    EXPECT_DOUBLE_EQ(back[i].arrival, jobs[i].arrival);
    EXPECT_DOUBLE_EQ(back[i].duration, jobs[i].duration);
    EXPECT_EQ(back[i].tenant, jobs[i].tenant);
  }
}

TEST(Generator, SameSeedSameTraceAndSameResult) {
  cs::GeneratorConfig g;
  g.jobs = 2000;
  g.seed = 42;
  const auto a = cs::generate_trace(g);
  const auto b = cs::generate_trace(g);
  std::stringstream sa, sb;
  cs::write_trace(sa, a);
  cs::write_trace(sb, b);
  EXPECT_EQ(sa.str(), sb.str());
  g.seed = 43;
  std::stringstream sc;
  cs::write_trace(sc, cs::generate_trace(g));
  EXPECT_NE(sa.str(), sc.str());

  cs::SimConfig cfg;
  const auto ra = cs::simulate(a, cfg);
  const auto rb = cs::simulate(b, cfg);
  EXPECT_EQ(ra.util_pct, rb.util_pct);
  EXPECT_EQ(ra.p99_wait, rb.p99_wait);
  EXPECT_EQ(ra.completed, 2000);  // atomic gangs: everything finishes
  EXPECT_EQ(ra.deadlocked, 0);
}

TEST(Generator, RejectsAbsurdSizes) {
  cs::GeneratorConfig g;
  g.jobs = 0;
  EXPECT_THROW(cs::generate_trace(g), gpulab::UsageError);
  g.jobs = 10;
  g.load = -1;
  EXPECT_THROW(cs::generate_trace(g), gpulab::UsageError);
}

// A trace is read under a cap: a directory or a device is a one-line usage error, and
// /dev/zero is refused instead of growing memory until the machine swaps.
TEST(Trace, LoadRefusesDirectoriesDevicesAndMissingFiles) {
  const auto message = [](const std::string& path) {
    try {
      cs::load_trace(path);
    } catch (const gpulab::UsageError& e) {
      return std::string(e.what());
    }
    return std::string("(accepted)");
  };
  EXPECT_NE(message("/").find("is a directory"), std::string::npos) << message("/");
  EXPECT_NE(message("/dev/zero").find("/dev/zero"), std::string::npos) << message("/dev/zero");
  EXPECT_NE(message("/dev/zero").find("(accepted)"), 0u);
  EXPECT_NE(message("/nonexistent/trace.csv").find("/nonexistent/trace.csv"), std::string::npos);
}

// Excel's CSV export starts with a UTF-8 byte-order mark; the header still reads as a header.
TEST(Trace, AcceptsAByteOrderMarkBeforeTheHeader) {
  std::istringstream in("\xEF\xBB\xBFid,arrival,gpus,duration\nA,0,2,10\n");
  EXPECT_EQ(cs::parse_trace(in, "t.csv").size(), 1u);
}
