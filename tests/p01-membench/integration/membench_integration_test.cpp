// Runs the membench program as a user would: every section of a --quick run,
// JSON for scripts, the deterministic spec-sheet roofline, and bad input.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>

#include "gpulab_test/program_run.hpp"

namespace {

using Run = gpulab_test::ProgramRun;

// A stderr file of its own per run: ctest runs these tests in parallel.
Run membench(const std::string& args, const std::string& env = "") {
  return gpulab_test::run_program("membench", args, gpulab_test::Stderr::kSeparate, env);
}

bool has(const std::string& text, const std::string& what) {
  return text.find(what) != std::string::npos;
}

TEST(Membench, QuickRunPrintsEverySectionAndPassesItsChecks) {
  const auto r = membench("--quick");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  for (const char* section :
       {"caches (sysfs):", "== latency (pointer chase) ==", "plateaus read off the curve",
        "curve vs the machine's cache description", "== bandwidth (stream) ==",
        "== peak compute (FP32 FMA) ==", "== roofline ==", "vector_add: AI=0.0833",
        "matmul b=64: AI\u224810.7", "== roofline (spec sheets", "== strided read"})
    EXPECT_TRUE(has(r.out, section)) << "missing: " << section << "\n" << r.out;
  for (const char* kernel : {"copy", "scale", "add", "triad", "read", "write"})
    EXPECT_TRUE(has(r.out, std::string("\n") + kernel + " ")) << kernel;
  EXPECT_TRUE(has(r.out, "PASS Solution Validates"));
  EXPECT_FALSE(has(r.out, "FAIL"));
}

TEST(Membench, JsonIsOneDocumentWithTheMeasuredPoints) {
  const auto r = membench("latency --quick --min 4K --max 64K --loads 2000 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto doc = nlohmann::json::parse(r.out);
  ASSERT_TRUE(doc.contains("latency"));
  EXPECT_EQ(doc["latency"]["points"].size(), 5U);  // 4, 8, 16, 32, 64 KiB
  EXPECT_EQ(doc["latency"]["points"][0]["bytes"], 4096);
  EXPECT_GT(doc["latency"]["points"][0]["ns_per_load"].get<double>(), 0.0);
  EXPECT_TRUE(doc["failures"].empty());
}

TEST(Membench, SpecRooflineIsDeterministicAndHasTheCurriculumsFigures) {
  const auto r = membench("roofline --spec --decode");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(has(r.out, "295.2"));        // H100 ridge
  EXPECT_TRUE(has(r.out, "4.18"));         // ms/token, 7B fp16 on H100
  EXPECT_TRUE(has(r.out, "239"));          // tokens/s
  EXPECT_FALSE(has(r.out, "== latency"));  // nothing measured
  EXPECT_EQ(membench("roofline --spec --decode").out, r.out);
}

TEST(Membench, CustomChipFromTwoSpecNumbers) {
  const auto r = membench("roofline --peak-tflops 100 --bandwidth-tbs 2 --ai 10 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto doc = nlohmann::json::parse(r.out);
  const auto& chip = doc["spec_roofline"]["accelerators"][0];
  EXPECT_EQ(chip["name"], "custom");
  EXPECT_DOUBLE_EQ(chip["ridge"].get<double>(), 50.0);
  EXPECT_DOUBLE_EQ(chip["attainable_tflops"].get<double>(), 20.0);
  EXPECT_EQ(chip["verdict"], "memory-bound");
}

TEST(Membench, PerfCountersAreMeasuredOrReportedUnavailable) {
  const auto r = membench("latency --min 4K --max 8K --loads 1000 --reps 1 --counters");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(has(r.out, "hardware counters: cache-references") ||
              has(r.out, "hardware counters: unavailable:"))
      << r.out;
}

TEST(Membench, SequentialChaseIsLabelledAsSuch) {
  const auto r = membench("latency --sequential --min 4K --max 8K --loads 1000");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(has(r.out, "SEQUENTIAL (identity) cycle"));
}

TEST(Membench, PlotWritesBothPicturesOrSaysWhyNot) {
  const std::string dir = ::testing::TempDir() + "membench-plots";
  const auto r = membench("roofline --quick --blocks 8 --matmul-n 64 --array 1M --plot " + dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // Where gnuplot is installed (tools/packages.txt has it) the picture must be drawn; the
  // "needs gnuplot" message is only acceptable where it is not.
  if (std::system("command -v gnuplot >/dev/null 2>&1") == 0) {
    EXPECT_TRUE(has(r.out, "plot: wrote " + dir + "/roofline.svg")) << r.out;
    std::ifstream svg(dir + "/roofline.svg");
    const std::string text((std::istreambuf_iterator<char>(svg)), {});
    EXPECT_NE(text.find("<svg"), std::string::npos) << "roofline.svg is not an SVG";
  } else {
    EXPECT_TRUE(has(r.out, "roofline.svg not written: --plot needs gnuplot")) << r.out;
  }
}

TEST(Membench, WithoutGnuplotTheRunGoesOnAndSaysSo) {
  const std::string dir = ::testing::TempDir() + "membench-noplot";
  const auto r =
      membench("latency --min 4K --max 8K --loads 1000 --plot " + dir, "env PATH=/nonexistent");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(has(r.out, "== latency (pointer chase) =="));
  EXPECT_TRUE(has(r.out, "latency.svg not written: --plot needs gnuplot")) << r.out;
}

// A picture that cannot be written (here: a directory in its place; a full or
// read-only disk in tests/hostile's out.membench.plot) used to be a "not written"
// line and exit 0. The results are still printed; the run fails with one error line.
TEST(Membench, APlotThatCannotBeWrittenFailsTheRun) {
  const std::string dir = ::testing::TempDir() + "membench-badplot";
  std::filesystem::create_directories(dir + "/latency.svg");
  const auto r = membench("latency --min 4K --max 8K --loads 1000 --plot " + dir);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_TRUE(has(r.out, "== latency (pointer chase) =="));
  EXPECT_EQ(r.err.rfind("membench: error: --plot: ", 0), 0U) << r.err;
  EXPECT_NE(r.err.find(dir + "/latency.svg"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  std::filesystem::remove_all(dir);
}

struct BadArgs {
  const char* args;
  const char* message;
};

void PrintTo(const BadArgs& b, std::ostream* os) {
  *os << "membench " << b.args;
}

class MembenchBadInput : public ::testing::TestWithParam<BadArgs> {};

TEST_P(MembenchBadInput, ExitsTwoWithOneClearLine) {
  const auto r = membench(GetParam().args);
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_TRUE(has(r.err, "membench: error:")) << r.err;
  EXPECT_TRUE(has(r.err, GetParam().message)) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
}

INSTANTIATE_TEST_SUITE_P(
    Cases, MembenchBadInput,
    ::testing::Values(
        BadArgs{"latency --min 1M --max 4K", "larger than --max"},
        BadArgs{"latency --min abc", "not a size"}, BadArgs{"latency --max 12Q", "unknown unit"},
        BadArgs{"bandwidth --threads 0", "--threads"},
        BadArgs{"bandwidth --threads -3", "--threads"}, BadArgs{"warp-speed", "unknown part"},
        BadArgs{"roofline --peak-tflops 5", "go together"},
        BadArgs{"roofline --blocks 7", "does not divide"}, BadArgs{"latency --steps 0", "--steps"},
        BadArgs{"latency --max 200G", "memory"}, BadArgs{"stride --cpu 100000", "--cpu 100000"},
        BadArgs{"--ai=-1 roofline --spec", "--ai"}, BadArgs{"roofline --spec --ai nan", "--ai"},
        BadArgs{"stride --max-stride 0", "--max-stride"},
        BadArgs{"latency --loads 99999999999999", "--loads"},
        BadArgs{"latency --plot /proc/version", "cannot create"}));

}  // namespace
