// The program as a user meets it: exit codes and one-line errors.
#include <gtest/gtest.h>

#include "gpulab_test/program_run.hpp"

#include <cstdio>
#include <fstream>
#include <string>

namespace {

// stdout and stderr together, as a user sees them in a terminal.
gpulab_test::ProgramRun run(const std::string& args) {
  return gpulab_test::run_program("cluster-sim", args, gpulab_test::Stderr::kMerged);
}

std::string temp_trace(const std::string& text) {
  const std::string path = testing::TempDir() + "/cluster_sim_bad.csv";
  std::ofstream(path) << text;
  return path;
}

}  // namespace

TEST(Cli, DefaultRunPrintsBothCurriculumTables) {
  const gpulab_test::ProgramRun r = run("");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("spread             60.9"), std::string::npos);
  EXPECT_NE(r.out.find("naive_no_gang : 0/3 jobs completed"), std::string::npos);
}

TEST(Cli, ClosedStdoutIsAFailedRunNotASilentSuccess) {
  // `>&-`: every write to stdout fails (EBADF). A big trace fails while printing, a small one
  // only at the final flush, which exit() would do without telling anyone.
  for (const char* jobs : {"1000", "2"}) {
    const auto r =
        gpulab_test::run_program("cluster-sim", std::string("generate --jobs ") + jobs + " >&-");
    EXPECT_EQ(r.exit_code, 1) << jobs;
    EXPECT_EQ(r.err, "cluster-sim: error: cannot write standard output: Bad file descriptor\n")
        << jobs;
  }
}

TEST(Cli, MalformedTraceRowIsOneLineAndExit2) {
  const std::string path = temp_trace("A,0,2,10\nB,0,two,10\n");
  const gpulab_test::ProgramRun r = run("run --trace " + path);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, "cluster-sim: error: " + path + ":2: gpus must be a whole number >= 1, got 'two'\n");
}

TEST(Cli, BadFlagsExit2) {
  EXPECT_EQ(run("run --trace /nonexistent.csv").exit_code, 2);
  EXPECT_EQ(run("run --generate 10 --policy random").exit_code, 2);
  EXPECT_EQ(run("run --generate 10 --nodes 0").exit_code, 2);
  EXPECT_EQ(run("run --generate 10 --gpus-per-node 100").exit_code, 2);
  EXPECT_EQ(run("run --generate 10 --queue lifo").exit_code, 2);
  EXPECT_EQ(run("run").exit_code, 2);
  EXPECT_EQ(run("--no-such-flag").exit_code, 2);
  EXPECT_EQ(run("run --generate 10 --trace x.csv").exit_code, 2);
}

TEST(Cli, HelpExitsZero) { EXPECT_EQ(run("--help").exit_code, 0); }

TEST(Cli, SameSeedSameTable) {
  const gpulab_test::ProgramRun a = run("run --generate 500 --seed 9 --gang");
  const gpulab_test::ProgramRun b = run("run --generate 500 --seed 9 --gang");
  const gpulab_test::ProgramRun c = run("run --generate 500 --seed 10 --gang");
  EXPECT_EQ(a.exit_code, 0);
  EXPECT_EQ(a.out, b.out);
  EXPECT_NE(a.out, c.out);
}

TEST(Cli, ExtensionsAllPass) {
  const gpulab_test::ProgramRun r = run("extensions");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(r.out.find("FAIL"), std::string::npos);
}
