// Runs batching-sim as a user would: exit codes, error lines, JSON invariants.
#include <gtest/gtest.h>

#include "gpulab_test/program_run.hpp"
#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

namespace {

using gpulab_test::ProgramRun;

ProgramRun run(const std::string& args) { return gpulab_test::run_program("batching-sim", args); }

std::string write_temp(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + name;
  std::ofstream(path) << text;
  return path;
}

TEST(BatchingSimCli, ContinuousRowIsTheSweepRowAtItsDepth) {
  const ProgramRun r = run("--json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto doc = nlohmann::json::parse(r.out);
  bool found = false;
  for (const auto& row : doc["sweep"])
    if (row["max_batch"] == doc["max_batch"]) {
      found = true;
      EXPECT_EQ(row["throughput_tok_s"], doc["continuous"]["throughput_tok_s"]);
      EXPECT_EQ(row["ttft_p99_ms"], doc["continuous"]["ttft_p99_ms"]);
      EXPECT_EQ(row["goodput_tok_s"], doc["continuous"]["goodput_tok_s"]);
    }
  EXPECT_TRUE(found);
  EXPECT_EQ(doc["goodput_optimal_max_batch"], 16);
}

TEST(BatchingSimCli, SameSeedSameOutputOtherSeedOtherOutput) {
  const ProgramRun a = run("--seed 5"), b = run("--seed 5"), c = run("--seed 6");
  ASSERT_EQ(a.exit_code, 0);
  EXPECT_EQ(a.out, b.out);
  EXPECT_NE(a.out, c.out);
}

TEST(BatchingSimCli, BadFlagsExitTwoWithOneLine) {
  for (const char* args :
       {"--rate 0", "--rate -1", "--max-batch 0", "--requests 0", "--slo-tpot-ms 0", "--depths 0,4",
        "--requests 20000000", "--prompt-min 0", "--rate abc", "--bogus", "interference --chunk 0",
        "interference --model nope", "admission --tpot-headroom 2", "prefix-cache --pool-blocks 0",
        "prefix-cache --system-tokens 4000000000"}) {
    const ProgramRun r = run(args);
    EXPECT_EQ(r.exit_code, 2) << args;
    EXPECT_EQ(r.err.rfind("batching-sim: error: ", 0), 0u) << args << ": " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << args << ": " << r.err;
  }
}

TEST(BatchingSimCli, TraceReplayAndBadTraceLine) {
  const std::string good = write_temp("batching-good.csv",
                                      "TIMESTAMP,ContextTokens,GeneratedTokens\n"
                                      "2023-11-16 18:15:46.6805900,374,44\n"
                                      "2023-11-16 18:15:47.1000000,120,30\n"
                                      "2023-11-16 18:15:49.0000000,800,12\n");
  const ProgramRun ok = run("--json --trace " + good);
  ASSERT_EQ(ok.exit_code, 0) << ok.err;
  const auto doc = nlohmann::json::parse(ok.out);
  EXPECT_EQ(doc["requests"], 3);
  EXPECT_EQ(doc["continuous"]["output_tokens"], 86);

  const std::string bad =
      write_temp("batching-bad.csv", "arrival_ms,prompt_tokens,output_tokens\n0,10,10\n5,10,x\n");
  const ProgramRun r = run("--trace " + bad);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("bad.csv:3: bad output token count 'x'"), std::string::npos) << r.err;
  EXPECT_EQ(run("--trace /nonexistent.csv").exit_code, 2);
  const ProgramRun dir = run("--trace /");
  EXPECT_EQ(dir.exit_code, 2);
  EXPECT_EQ(dir.err, "batching-sim: error: '/' is a directory, not a file\n");
}

TEST(BatchingSimCli, SubcommandsRunAndHelpExitsZero) {
  EXPECT_EQ(run("--help").exit_code, 0);
  for (const char* sub :
       {"interference --requests 100", "prefix-cache --requests 100", "admission --requests 100"}) {
    const ProgramRun r = run(std::string(sub) + " --json");
    EXPECT_EQ(r.exit_code, 0) << sub << ": " << r.err;
    const auto doc = nlohmann::json::parse(r.out, nullptr, false);
    EXPECT_FALSE(doc.is_discarded()) << sub;
    EXPECT_FALSE(doc["rows"].empty()) << sub;
  }
}

TEST(CliPlot, WritesAnSvgOrSkipsWithoutGnuplot) {
  const std::string svg = ::testing::TempDir() + "batching-plot.svg";
  std::remove(svg.c_str());
  const ProgramRun r = run("--requests 200 --plot " + svg);
  if (r.exit_code == 77) GTEST_SKIP() << r.err;
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::ifstream in(svg);
  const std::string text((std::istreambuf_iterator<char>(in)), {});
  EXPECT_NE(text.find("<svg"), std::string::npos);
}

}  // namespace
