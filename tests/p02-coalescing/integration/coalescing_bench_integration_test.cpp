// Runs coalescing-bench the way a user would.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "gpulab_test/program_run.hpp"
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

using Result = gpulab_test::ProgramRun;  // out holds stdout and stderr

Result run(const std::string& args) {
  return gpulab_test::run_program("coalescing-bench", args, gpulab_test::Stderr::kMerged);
}

}  // namespace

TEST(CoalescingBenchProgram, WithoutAGpuSkipsWithTheReason) {
  const Result r = run("--buffer-mb 8 --transpose-n 256 --reps 1");
  if (r.exit_code == 0) {
    // With a GPU, exit 0 alone proves nothing: every measured row must be verified.
    const gpulab_test::ProgramRun j = gpulab_test::run_program(
        "coalescing-bench", "--buffer-mb 8 --transpose-n 256 --reps 1 --json",
        gpulab_test::Stderr::kSeparate);
    ASSERT_EQ(j.exit_code, 0) << j.out << j.err;
    const auto doc = nlohmann::json::parse(j.out, nullptr, false);
    ASSERT_TRUE(doc.is_object()) << j.out;
    EXPECT_EQ(doc.value("all_checks_pass", false), true) << j.out;
    std::size_t rows = 0;
    for (const char* table : {"stride", "aos_soa", "vector_copy", "transpose"})
      for (const auto& row : doc[table]) {
        if (row.value("skipped", false)) continue;  // a row this GPU cannot run names its reason
        ++rows;
        EXPECT_TRUE(row.value("ok", false)) << row.dump();
      }
    EXPECT_GE(rows, 4u) << j.out;
    if (HasFailure()) return;
    GTEST_SKIP() << "a GPU is present (its run was verified above): the no-GPU path is not reachable here";
  }
  EXPECT_EQ(r.exit_code, 77) << r.out;
  EXPECT_NE(r.out.find("coalescing-bench: SKIPPED: no CUDA device ("), std::string::npos) << r.out;
  // Which back end answered: the CUDA one asks the runtime; the build without nvcc says so.
#ifdef COALESCING_HAVE_CUDA
  EXPECT_NE(r.out.find("cudaGetDeviceCount"), std::string::npos) << r.out;
#else
  EXPECT_NE(r.out.find("this build has no CUDA compiler"), std::string::npos) << r.out;
#endif
}

TEST(CoalescingBenchProgram, BadInputIsAOneLineUsageError) {
  for (const char* args :
       {"--buffer-mb 0", "--buffer-mb x", "--transpose-n 100", "--reps 0", "--warmup -1",
        "--only stride,bogus", "--nope", "model --transpose-n 33"}) {
    const Result r = run(args);
    EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.out;
    EXPECT_EQ(r.out.rfind("coalescing-bench: error: ", 0), 0u) << args << "\n" << r.out;
  }
}

TEST(CoalescingBenchProgram, ModelRunsWithoutAGpu) {
  const Result r = run("model");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("32-way"), std::string::npos) << r.out;
  const Result j = run("model --json");
  EXPECT_EQ(j.exit_code, 0);
  EXPECT_EQ(j.out.front(), '{');
}

TEST(CoalescingBenchProgram, ModelDrawsTheStrideCliff) {
  if (std::system("command -v gnuplot >/dev/null 2>&1") != 0)
    GTEST_SKIP() << "gnuplot is not installed";
  const std::string svg = testing::TempDir() + "coalescing-stride.svg";
  std::remove(svg.c_str());
  const Result r = run("model --plot " + svg);
  EXPECT_EQ(r.exit_code, 0) << r.out;
  FILE* f = std::fopen(svg.c_str(), "r");
  ASSERT_NE(f, nullptr) << "no SVG written";
  std::fclose(f);
  const std::string junk = testing::TempDir() + "coalescing-junk.json";
  if (FILE* j = std::fopen(junk.c_str(), "w")) {
    std::fputs("{not json", j);
    std::fclose(j);
  }
  const Result bad = run("model --plot " + svg + " --measured " + junk);
  EXPECT_EQ(bad.exit_code, 2) << bad.out;
  EXPECT_NE(bad.out.find("is not JSON"), std::string::npos) << bad.out;
}
