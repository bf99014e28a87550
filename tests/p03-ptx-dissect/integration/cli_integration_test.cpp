#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "gpulab_test/program_run.hpp"

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

// A build without nvcc leaves its artifacts directory empty: that is a skip. A directory the
// user names that does not exist is their mistake: an error, not "install the CUDA Toolkit".
TEST(PtxDissectCli, MissingArtifactsAreASkipNotAFailure) {
  const std::string empty = ::testing::TempDir() + "ptx-dissect-no-artifacts-" + std::to_string(::getpid());
  std::filesystem::create_directories(empty);
  const auto r = run("--artifacts '" + empty + "'");
  EXPECT_EQ(r.exit_code, 77) << r.out;
  EXPECT_NE(r.out.find("ptx-dissect: SKIPPED: no nvcc artifacts"), std::string::npos) << r.out;
  const auto wrong = run("--artifacts /nonexistent-dir");
  EXPECT_EQ(wrong.exit_code, 2) << wrong.out;
  EXPECT_EQ(wrong.out, "ptx-dissect: error: --artifacts /nonexistent-dir: no such directory\n");
  std::filesystem::remove_all(empty);
}

namespace {

bool built_artifacts() {
  return std::filesystem::exists(std::filesystem::path(PTX_DISSECT_ARTIFACTS) / "kernels.ptx");
}

std::size_t count_lines_with(const std::string& text, const std::string& part) {
  std::size_t n = 0;
  for (auto p = text.find(part); p != std::string::npos; p = text.find(part, p + 1)) ++n;
  return n;
}

}  // namespace

TEST(PtxDissectCli, SassRowsRunWithTheCuobjdumpTheBuildFound) {
  if (!built_artifacts()) GTEST_SKIP() << "no nvcc artifacts (nvcc absent at build time)";
  const std::string cuobjdump = PTX_DISSECT_CUOBJDUMP;
  if (cuobjdump.empty())
    GTEST_SKIP() << "no cuobjdump at configure time (tools/lab build installs it)";
  const auto r = run("");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("20 checks: 20 PASS, 0 FAIL, 0 SKIP"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("1 predicated (@!P0 FMUL), 0 SEL/FSEL, 0 BRA"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("HMMA.16816.F32"), std::string::npos) << r.out;
}

TEST(PtxDissectCli, WithoutCuobjdumpTheSassRowsSkipWithTheReason) {
  if (!built_artifacts()) GTEST_SKIP() << "no nvcc artifacts (nvcc absent at build time)";
  const auto r = run("--cuobjdump ''");
  EXPECT_EQ(r.exit_code, 0) << r.out;  // a SKIP row is not a failure
  EXPECT_EQ(count_lines_with(r.out, "no cuobjdump (tools/lab build installs it)"), 5U) << r.out;
  EXPECT_NE(r.out.find("20 checks: 15 PASS, 0 FAIL, 5 SKIP"), std::string::npos) << r.out;
  const auto j = run("--json --cuobjdump ''");
  EXPECT_NE(j.out.find("\"skipped\": 5"), std::string::npos) << j.out;
}

TEST(PtxDissectCli, ABrokenCuobjdumpFailsTheRun) {
  if (!built_artifacts()) GTEST_SKIP() << "no nvcc artifacts (nvcc absent at build time)";
  const auto r = run("--cuobjdump /bin/false");
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_EQ(count_lines_with(r.out, "cuobjdump exit 1 on kernels.cubin"), 5U) << r.out;
  EXPECT_NE(r.out.find("20 checks: 15 PASS, 5 FAIL, 0 SKIP"), std::string::npos) << r.out;
}

TEST(PtxDissectCli, PipelineShowsNvccsStepsWithStableNames) {
  if (!built_artifacts()) GTEST_SKIP() << "no nvcc artifacts (nvcc absent at build time)";
  const auto r = run("pipeline");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  for (const char* part : {"nvcc -dryrun -gencode arch=compute_80,code=sm_80", ": 11 steps",
                           "cudafe++", "cicc", "PTX -> SASS for sm_80", "fatbinary"})
    EXPECT_NE(r.out.find(part), std::string::npos) << part << "\n" << r.out;
  EXPECT_EQ(r.out.find("tmpxft"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("/tmp/"), std::string::npos) << r.out;
  EXPECT_EQ(run("pipeline").out, r.out);  // the same plan on every run
}

TEST(PtxDissectCli, PipelineRefusesWhatIsNotADryRun) {
  const std::string notes = testing::TempDir() + "not-a-dryrun.txt";
  std::ofstream(notes) << "nvcc fatal   : Unknown option '-bogus'\n";
  const auto r = run("pipeline --from " + notes);
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_EQ(r.out, "ptx-dissect: error: " + notes +
                       ": no nvcc -dryrun steps (lines that start with '#$ ')\n");
  const auto missing = run("pipeline --from /no/such/dryrun.txt");
  EXPECT_EQ(missing.exit_code, 2) << missing.out;
  EXPECT_EQ(missing.out.rfind("ptx-dissect: error: ", 0), 0U) << missing.out;
  const std::string empty = ::testing::TempDir() + "ptx-dissect-unbuilt-" + std::to_string(::getpid());
  std::filesystem::create_directories(empty);
  const auto unbuilt = run("--artifacts '" + empty + "' pipeline");
  EXPECT_EQ(unbuilt.exit_code, 77) << unbuilt.out;
  EXPECT_NE(unbuilt.out.find("ptx-dissect: SKIPPED: no " + empty + "/nvcc-dryrun.txt"),
            std::string::npos)
      << unbuilt.out;
  std::filesystem::remove_all(empty);
}

TEST(PtxDissectCli, ClangDiffSkipsWithoutClangsPtxAndRefusesUnrelatedFiles) {
  const std::string dir = ::testing::TempDir() + "ptx-dissect-clang-" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  const auto unbuilt = run("--artifacts '" + dir + "' clang-diff");
  EXPECT_EQ(unbuilt.exit_code, 77) << unbuilt.out;
  EXPECT_NE(unbuilt.out.find("ptx-dissect: SKIPPED: no " + dir + "/kernels-clang.ptx"),
            std::string::npos)
      << unbuilt.out;
  std::ofstream(dir + "/kernels.ptx") << ".version 9.0\n.visible .entry a()\n{\n ret;\n}\n";
  std::ofstream(dir + "/kernels-clang.ptx") << ".version 7.0\n.visible .entry b()\n{\n ret;\n}\n";
  const auto unrelated = run("--artifacts '" + dir + "' clang-diff");
  EXPECT_EQ(unrelated.exit_code, 2) << unrelated.out;
  EXPECT_EQ(unrelated.out, "ptx-dissect: error: --artifacts " + dir +
                               ": the two PTX files share no .entry (not the same source?)\n");
  std::filesystem::remove_all(dir);
}

TEST(PtxDissectCli, ClangDiffOnTheBuildsPtxKeepsTheAbi) {
  if (!std::filesystem::exists(std::filesystem::path(PTX_DISSECT_ARTIFACTS) / "kernels-clang.ptx"))
    GTEST_SKIP() << "no clang PTX (the build found no clang with the NVPTX target, or no nvcc)";
  const auto r = run("clang-diff");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(count_lines_with(r.out, " identical "), 5U) << r.out;
  EXPECT_EQ(r.out.find("DIFFERENT"), std::string::npos) << r.out;
}

TEST(PtxDissectCli, ColdStartSkipsWithoutTheBuildsFatbins) {
  const std::string dir = ::testing::TempDir() + "ptx-dissect-cold-" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  const auto unbuilt = run("--artifacts '" + dir + "' cold-start");
  EXPECT_EQ(unbuilt.exit_code, 77) << unbuilt.out;
  EXPECT_NE(unbuilt.out.find("ptx-dissect: SKIPPED: no " + dir + "/fat.fatbin"), std::string::npos)
      << unbuilt.out;
  std::filesystem::remove_all(dir);
}
