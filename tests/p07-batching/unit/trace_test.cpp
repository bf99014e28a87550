#include "batching/trace.hpp"

#include <gtest/gtest.h>

#include <sstream>

#include "batching/workload.hpp"
#include "gpulab/errors.hpp"

namespace batching {
namespace {

std::vector<Request> parse(const std::string& text) {
  std::istringstream in(text);
  return parse_trace(in, "t.csv");
}

std::string error_of(const std::string& text) {
  try {
    parse(text);
  } catch (const gpulab::UsageError& e) {
    return e.what();
  }
  return "";
}

TEST(Trace, AzureLayout) {
  const auto r = parse(
      "TIMESTAMP,ContextTokens,GeneratedTokens\n"
      "2023-11-16 18:15:46.6805900,374,44\r\n"
      "2023-11-16 18:15:50.9951690,396,109\n"
      "2023-11-16 18:16:00.0000000,879,1\n");
  ASSERT_EQ(r.size(), 3u);
  EXPECT_DOUBLE_EQ(r[0].arrival_ms, 0);
  EXPECT_NEAR(r[1].arrival_ms, 4314.579, 1e-3);
  EXPECT_NEAR(r[2].arrival_ms, 13319.41, 1e-2);
  EXPECT_EQ(r[1].prompt_tokens, 396u);
  EXPECT_EQ(r[1].output_tokens, 109u);
}

TEST(Trace, AzureAcrossMidnightAndWithZone) {
  const auto r = parse(
      "TIMESTAMP,ContextTokens,GeneratedTokens\n"
      "2024-05-10 23:59:59.500000+00:00,10,10\n"
      "2024-05-11 00:00:00.250000+00:00,10,10\n");
  EXPECT_NEAR(r[1].arrival_ms, 750, 1e-6);
}

TEST(Trace, PlainLayoutWithAndWithoutHeader) {
  const auto a =
      parse("arrival_ms,prompt_tokens,output_tokens\n# comment\n\n100,64,10\n250.5,128,20\n");
  ASSERT_EQ(a.size(), 2u);
  EXPECT_DOUBLE_EQ(a[1].arrival_ms, 150.5);
  const auto b = parse("0,1,1\n5,2,3\n");
  EXPECT_EQ(b[1].output_tokens, 3u);
}

TEST(Trace, BadLinesNameTheirLine) {
  EXPECT_EQ(error_of("arrival_ms,prompt_tokens,output_tokens\n0,64,10\n5,64\n"),
            "t.csv:3: expected 3 comma-separated fields, got 2");
  EXPECT_EQ(error_of("0,64,10\n5,abc,10\n"),
            "t.csv:2: bad prompt token count 'abc' (want an integer in 1..10000000)");
  EXPECT_EQ(error_of("0,64,0\n"),
            "t.csv:1: bad output token count '0' (want an integer in 1..10000000)");
  EXPECT_EQ(error_of("10,64,10\n5,64,10\n"),
            "t.csv:2: arrival goes back in time (sort the trace by arrival)");
  EXPECT_EQ(error_of("-3,64,10\n"), "t.csv:1: bad arrival_ms '-3' (want a number >= 0)");
  EXPECT_NE(error_of("TIMESTAMP,ContextTokens,GeneratedTokens\n2023-13-01 00:00:00,1,1\n")
                .find("t.csv:2: bad timestamp"),
            std::string::npos);
  EXPECT_NE(error_of("time,in,out\n1,2,3\n").find("t.csv:1: unknown header"), std::string::npos);
  EXPECT_EQ(error_of("# nothing\n"), "t.csv: the trace holds no requests");
  EXPECT_EQ(error_of("0,99999999999,10\n"),
            "t.csv:1: bad prompt token count '99999999999' (want an integer in 1..10000000)");
}

TEST(Trace, MissingFile) {
  EXPECT_THROW(load_trace("/nonexistent/trace.csv"), gpulab::UsageError);
}

std::string load_error(const std::string& path) {
  try {
    load_trace(path);
  } catch (const gpulab::UsageError& e) {
    return e.what();
  }
  return "";
}

// A trace is read under a size cap: a directory or an endless device is one
// error naming the file, not an empty trace or an exhausted memory.
TEST(Trace, DirectoryAndEndlessFileAreRefused) {
  EXPECT_EQ(load_error("/"), "'/' is a directory, not a file");
  EXPECT_EQ(load_error("/dev/zero"), "'/dev/zero' is a device, not a file");
}

TEST(Workload, RejectsImpossibleSpecs) {
  WorkloadSpec w;
  w.rate_per_s = 0;
  EXPECT_THROW(validate(w), gpulab::UsageError);
  w = {};
  w.prompt_min = 2000;
  EXPECT_THROW(validate(w), gpulab::UsageError);
  w = {};
  w.requests = 0;
  EXPECT_THROW(validate(w), gpulab::UsageError);
}

}  // namespace
// Excel's CSV export starts with a UTF-8 byte-order mark; the header still reads as a header.
TEST(Trace, AcceptsAByteOrderMarkBeforeTheHeader) {
  EXPECT_EQ(parse("\xEF\xBB\xBF" "arrival_ms,prompt_tokens,output_tokens\n0,10,5\n").size(), 1u);
}

}  // namespace batching
