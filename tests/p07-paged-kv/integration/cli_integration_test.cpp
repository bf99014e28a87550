// Runs paged-kv as a user would: exit codes, error lines, JSON figures.
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

ProgramRun run(const std::string& args) { return gpulab_test::run_program("paged-kv", args); }

TEST(PagedKvCli, DefaultPrintsTheCurriculumFigures) {
  const ProgramRun r = run("");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("naive contiguous (reserve max_len=2048)  :   32 sequences\n"),
            std::string::npos);
  EXPECT_NE(r.out.find("paged (allocate-on-demand, actual=768)    :   85 sequences   (2.7x)\n"),
            std::string::npos);
  EXPECT_NE(r.out.find("without sharing :  3350 blocks used\n"), std::string::npos);
  EXPECT_NE(
      r.out.find("with sharing    :   214 blocks used   (15.7x less; shared prefix stored once)\n"),
      std::string::npos);
  EXPECT_NE(r.out.find("copy-on-write   : divergence forked block; refcounts correct\n"),
            std::string::npos);
  EXPECT_EQ(r.out.find("FAIL"), std::string::npos);
}

TEST(PagedKvCli, PoolExhaustionIsReportedNotFailed) {
  const ProgramRun r = run("--pool-blocks 1000");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("(pool exhausted: 14 of 50 requests fit)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("at least 4.7x less"), std::string::npos) << r.out;
}

TEST(PagedKvCli, KvMathJson) {
  const ProgramRun r = run("kv-math --model llama-3-8b --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto doc = nlohmann::json::parse(r.out);
  EXPECT_EQ(doc["kv_bytes_per_token"], 131072);
  EXPECT_EQ(doc["kv_bytes_per_sequence"], 1073741824);
  EXPECT_EQ(doc["sequences_fit"], 22);
  const auto custom =
      nlohmann::json::parse(run("kv-math --layers 32 --kv-heads 8 --head-dim 128 --dtype fp8 "
                                "--context 8192 --hbm-gb 40 --weights-gb 16 --json")
                                .out);
  EXPECT_EQ(custom["kv_bytes_per_token"], 65536);
  EXPECT_EQ(custom["sequences_fit"], 44);
}

TEST(PagedKvCli, BadInputExitsTwoWithOneLine) {
  for (const char* args : {"--block-size 0",
                           "--pool-blocks 0",
                           "--actual-len 4096",
                           "--cow-prefix 32",
                           "kv-math --model gpt-9",
                           "kv-math --context 0",
                           "kv-math --dtype fp4",
                           "kv-math --layers 32",
                           "kv-math --hbm-gb -1",
                           "prefix-cache --pools 0",
                           "prefix-cache --block-size 0",
                           "--pool-blocks abc",
                           "--nope",
                           "evict --pool-blocks 10",
                           "evict --pcie-gbs 0",
                           "evict --model nope",
                           "beam --width 0",
                           "beam --block-size 0",
                           "block-sweep --sizes 0",
                           "block-sweep --sequences 0",
                           "evict --requests 5",
                           "beam --width 4096 --steps 999000",
                           "--pool-blocks 100000000"}) {
    const ProgramRun r = run(args);
    EXPECT_EQ(r.exit_code, 2) << args;
    EXPECT_EQ(r.err.rfind("paged-kv: error: ", 0), 0u) << args << ": " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << args << ": " << r.err;
  }
}

TEST(PagedKvCli, ExtensionsPassTheirChecks) {
  for (const char* sub : {"evict", "beam", "block-sweep --quick"}) {
    const ProgramRun r = run(sub);
    EXPECT_EQ(r.exit_code, 0) << sub << ": " << r.err;
    EXPECT_EQ(r.out.find("FAIL"), std::string::npos) << sub;
  }
}

TEST(PagedKvCli, SameSeedSameOutput) {
  const ProgramRun a = run("prefix-cache --requests 300 --seed 3"),
                   b = run("prefix-cache --requests 300 --seed 3");
  ASSERT_EQ(a.exit_code, 0) << a.err;
  EXPECT_EQ(a.out, b.out);
  EXPECT_NE(a.out, run("prefix-cache --requests 300 --seed 4").out);
}

TEST(CliPlot, WritesAnSvgOrSkipsWithoutGnuplot) {
  const std::string svg = ::testing::TempDir() + "paged-kv-plot.svg";
  std::remove(svg.c_str());
  const ProgramRun r = run("block-sweep --quick --plot " + svg);
  if (r.exit_code == 77) GTEST_SKIP() << r.err;
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::ifstream in(svg);
  const std::string text((std::istreambuf_iterator<char>(in)), {});
  EXPECT_NE(text.find("<svg"), std::string::npos);
}

}  // namespace
