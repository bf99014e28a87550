// Runs the simt-sim program as a user would: exit codes, diagnostics, JSON.
#include <gtest/gtest.h>

#include "gpulab_test/program_run.hpp"
#include <nlohmann/json.hpp>
#include <sys/wait.h>

#include <cstdio>
#include <fstream>
#include <string>

namespace {

using Result = gpulab_test::ProgramRun;  // out holds stdout and stderr

Result sim(const std::string& args) {
  return gpulab_test::run_program("simt-sim", args, gpulab_test::Stderr::kMerged);
}

std::string write_temp(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + name;
  std::ofstream(path) << text;
  return path;
}

}  // namespace

TEST(SimtSim, NoArgumentsPrintsTheTableAndPasses) {
  const auto r = sim("");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(r.out.rfind("kernel            issues   util%  slowdown\n", 0), 0u);
  EXPECT_NE(r.out.find("PASS: 7 of 7 kernels passed their checks"), std::string::npos);
}

TEST(SimtSim, EveryPitfallFlagExitsOneWithFailLines) {
  for (const char* flag : {"--reconverge-at-target", "--unmasked-writes", "--jmp-reconverges"}) {
    const auto r = sim(flag);
    EXPECT_EQ(r.exit_code, 1) << flag;
    EXPECT_NE(r.out.find("FAIL even_odd: 16 of 32 words wrong"), std::string::npos) << flag << "\n" << r.out;
  }
}

TEST(SimtSim, RunPrintsJsonWithTheDocumentedKeys) {
  const auto r = sim(std::string("run ") + GPULAB_LAB_DIR + "/kernels/even_odd.simt --json --mem-words 64");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["issues"], 10);
  EXPECT_EQ(j["lane_cycles"], 224);
  EXPECT_DOUBLE_EQ(j["util_pct"].get<double>(), 70.0);
  EXPECT_EQ(j["max_stack_depth"], 1);
  ASSERT_EQ(j["mem"].size(), 64u);
  EXPECT_EQ(j["mem"][3], 9);
}

TEST(SimtSim, TraceShowsEachIssueWithItsMask) {
  const auto r = sim(std::string("run ") + GPULAB_LAB_DIR + "/kernels/even_odd.simt --trace");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("mask aaaaaaaa  MUL  r2, r0, r0"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("mask 55555555  ADD  r2, r2, 1"), std::string::npos) << r.out;
}

TEST(SimtSim, AssemblyErrorsAreFileLineDiagnosticsWithExitTwo) {
  const auto path = write_temp("bad.simt", "TID r0\nFROB r1, r0\n");
  const auto r = sim("run " + path);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, path + ":2: error: unknown mnemonic 'FROB'\n");
}

TEST(SimtSim, RuntimeFaultsExitOne) {
  const auto oob = write_temp("oob.simt", "LI r0, 5000\nST r0, r0\n");
  auto r = sim("run " + oob);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("ST address 5000 out of range [0, 1024)"), std::string::npos) << r.out;

  const auto spin = write_temp("spin.simt", "L: JMP L\n");
  r = sim("run " + spin + " --max-issues 500");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("more than 500 issues"), std::string::npos) << r.out;
}

TEST(SimtSim, BadUsageExitsTwo) {
  EXPECT_EQ(sim("run /nonexistent/x.simt").exit_code, 2);
  EXPECT_EQ(sim("--policy sideways").exit_code, 2);
  EXPECT_EQ(sim("run").exit_code, 2);
  EXPECT_EQ(sim("--bogus").exit_code, 2);
  const auto r = sim("run " + write_temp("ok.simt", "TID r0\n") + " --warps 0");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.out.find("simt-sim: error: --warps must be in [1, 1024]"), std::string::npos) << r.out;
}

TEST(SimtSim, UnfinishedDivergentRegionFailsTheRun) {
  const auto r = sim(std::string("run ") + GPULAB_LAB_DIR + "/kernels/even_odd.simt --reconverge-at-target");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("FAIL: the program ended inside a divergent region"), std::string::npos) << r.out;
}

TEST(SimtSim, ADirectoryOrDeviceIsNotAProgram) {
  // Before: a directory read as an empty program, /dev/zero grew without bound.
  auto r = sim("run /tmp");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, "simt-sim: error: '/tmp' is a directory, not a file\n");
  r = sim("run /dev/zero");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, "simt-sim: error: '/dev/zero' is a device, not a file\n");
  const auto big = write_temp("big.simt", std::string((1 << 20) + 1, ';'));
  r = sim("run " + big);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, "simt-sim: error: '" + big + "' is larger than 1 MiB\n");
}

TEST(SimtSim, NegativeSizesAreRefusedNotWrapped) {
  const auto r = sim("run " + write_temp("ok2.simt", "TID r0\n") + " --mem-words -1");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out,
            "simt-sim: error: --mem-words: must be a whole number in [1, 268435456], got '-1' (see "
            "--help)\n");
}
