// The ptxc program as a user runs it: exit codes, compiler-style errors, the
// out-of-bounds report without the guard.
#include <gtest/gtest.h>

#include "gpulab_test/program_run.hpp"

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

namespace {

// stdout and stderr together, as a user sees them in a terminal.
gpulab_test::ProgramRun run(const std::string& args) {
  return gpulab_test::run_program("ptxc", args, gpulab_test::Stderr::kMerged);
}

std::string temp_file(const std::string& name, const std::string& text) {
  const std::string path = testing::TempDir() + name;
  std::ofstream(path) << text;
  return path;
}

const std::string kLab = GPULAB_LAB_DIR;

}  // namespace

TEST(PtxcCli, SuitePassesAndPrintsTheTable) {
  const auto r = run("");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("10/10 kernels agree with the reference at -O0 and -O1"), std::string::npos)
      << r.out;
}

TEST(PtxcCli, CompileErrorsLookLikeACompilersAndExitTwo) {
  const auto r = run("compile " + kLab + "/kernels/errors.ptxc");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.out.find("errors.ptxc:3:19: error: use of undefined name 'scale'\n"
                       "      a[i] = a[i] * scale;\n"
                       "                    ^\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("ptxc: error: 4 errors in"), std::string::npos) << r.out;
}

TEST(PtxcCli, BadInputIsAOneLineErrorWithExitTwo) {
  for (const std::string& args : std::vector<std::string>{
           "compile /no/such/file.k", "run " + kLab + "/kernels/elementwise.ptxc --n 0",
           "run " + kLab + "/kernels/elementwise.ptxc --block 5000",
           "compile " + kLab + "/kernels/elementwise.ptxc --target sm_42",
           "compile " + kLab + "/kernels/elementwise.ptxc --emit bytes",
           "run " + kLab + "/kernels/elementwise.ptxc --kernel nope", "--no-such-flag"}) {
    const auto r = run(args);
    EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.out;
    EXPECT_EQ(r.out.rfind("ptxc: error: ", 0), 0U) << args << "\n" << r.out;
  }
}

TEST(PtxcCli, BinaryGarbageIsRejectedNotCrashedOn) {
  const auto path = temp_file("garbage.k", std::string("kernel \x01\xff\x00 k(", 12));
  const auto r = run("compile " + path);
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("unexpected character '\\x01'"), std::string::npos) << r.out;
}

// 40,000 terms (about 280 KB) in one expression: a located error and exit 2,
// not a stack overflow; a directory is refused by name.
TEST(PtxcCli, HugeExpressionAndDirectoryAreOneErrorEach) {
  std::string src = "kernel k(a: f32*) {\n  a[i] = a[i]";
  for (int t = 1; t < 40000; ++t) src += " + a[i]";
  const auto r = run("compile " + temp_file("flat.k", src + ";\n}\n"));
  EXPECT_EQ(r.exit_code, 2) << r.out.substr(0, 300);
  EXPECT_NE(r.out.find("flat.k:2:"), std::string::npos) << r.out.substr(0, 300);
  EXPECT_NE(r.out.find("error: expression too deep: more than 1000 levels"), std::string::npos)
      << r.out.substr(0, 300);
  EXPECT_NE(r.out.find("ptxc: error: 1 error in "), std::string::npos) << r.out.substr(0, 300);
  const auto dir = run("run /");
  EXPECT_EQ(dir.exit_code, 2);
  EXPECT_EQ(dir.out, "ptxc: error: '/' is a directory, not a file\n");
}

TEST(PtxcCli, RemovingTheGuardFailsTheDifferentialTestWithTheFaultingThread) {
  const auto r = run("run " + kLab + "/kernels/elementwise.ptxc --kernel vadd --no-guard");
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("FAIL vadd: thread 1000 (block 7, thread 104): out-of-bounds"),
            std::string::npos)
      << r.out;
}

TEST(PtxcCli, RunAgainstNvccPtxIsBitIdentical) {
  const auto r = run("run " + kLab + "/kernels/elementwise.ptxc --against " + kLab +
                     "/kernels/nvcc13-sm80-O3.ptx");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(r.out.find("differ"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("bit-identical"), std::string::npos) << r.out;
}

TEST(PtxcCli, JsonIsOneDocument) {
  const auto r = run("--json");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out.front(), '{');
  EXPECT_NE(r.out.find("\"pass\": true"), std::string::npos) << r.out;
}
