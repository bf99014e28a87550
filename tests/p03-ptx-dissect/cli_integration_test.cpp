#include <gtest/gtest.h>

#include "gpulab_test/program_run.hpp"

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

namespace {

// stdout and stderr together, as a user sees them in a terminal.
gpulab_test::ProgramRun run(const std::string& args) {
  return gpulab_test::run_program("ptx-dissect", args, gpulab_test::Stderr::kMerged);
}

}  // namespace

TEST(PtxDissectCli, LoadTableShowsTheThreeCurriculumOutcomes) {
  const auto r = run("load-table");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("A100         sm_80   run sm_80 SASS"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("JIT compute_90 PTX"), std::string::npos) << r.out;
}

TEST(PtxDissectCli, BadInputExitsTwoWithOneLine) {
  const std::string garbage = testing::TempDir() + "garbage.fatbin";
  std::ofstream(garbage) << "not a fatbin at all";
  for (const std::string& args :
       std::vector<std::string>{"annotate /no/such.ptx", "load-table --fatbin /no/such",
                                "load-table --fatbin " + garbage, "--bogus"}) {
    const auto r = run(args);
    EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.out;
    EXPECT_EQ(r.out.rfind("ptx-dissect: error: ", 0), 0U) << args << "\n" << r.out;
  }
}

TEST(PtxDissectCli, MissingArtifactsAreASkipNotAFailure) {
  const auto r = run("--artifacts /nonexistent-dir");
  EXPECT_EQ(r.exit_code, 77) << r.out;
  EXPECT_NE(r.out.find("ptx-dissect: SKIPPED: no nvcc artifacts"), std::string::npos) << r.out;
}
