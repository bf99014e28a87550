#include "readme_run.hpp"

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

using readme::Block;
using readme::Outcome;
using readme::RunResult;

namespace {

Block block(const std::string& marker, const std::string& command,
            std::vector<std::string> expected) {
  auto blocks = readme::find_blocks(readme::split_lines("<!-- gpulab-check: " + marker +
                                                        " -->\n```text\n$ " + command + "\n```\n"));
  blocks.at(0).expected = std::move(expected);
  return blocks.at(0);
}

RunResult run(const std::string& command) {
  return readme::run_command(command, "/nonexistent", "/");
}

}  // namespace

TEST(ReadmeRun, CapturesStdoutStderrAndExitStatus) {
  const auto r = run("echo out; echo err >&2; exit 3");
  EXPECT_EQ(r.out, "out\n");
  EXPECT_EQ(r.err, "err\n");
  EXPECT_EQ(r.exit_code, 3);
}

TEST(ReadmeRun, PipelinesDoNotHideTheProgramsExitStatus) {
  EXPECT_EQ(run("echo x; exit 0").exit_code, 0);
  EXPECT_EQ(run("{ echo x; exit 2; } | cat").exit_code, 2);
  EXPECT_EQ(run("false | tail -n 1").exit_code, 1);
}

TEST(ReadmeRun, RunsInCwdWithBinFirstOnPath) {
  const auto r = readme::run_command("pwd; echo \"$PATH\" | cut -d: -f1", "/some/bin", "/tmp");
  EXPECT_EQ(r.out, "/tmp\n/some/bin\n");
}

TEST(ReadmeRun, ExitStatusMustMatchTheMarker) {
  const Block b = block("exact", "prog", {"ok"});
  EXPECT_EQ(readme::judge(b, {0, "ok\n", ""}, {}).outcome, Outcome::kPass);
  EXPECT_EQ(readme::judge(b, {1, "ok\n", "prog: error: x\n"}, {}).outcome, Outcome::kFail);
  EXPECT_EQ(readme::judge(b, {0, "not ok\n", ""}, {}).outcome, Outcome::kFail);
}

// The p05 double-free block: empty stdout, exit 2, one error line. Pointing it at a missing
// file also exits 2 with empty stdout; only the error line tells them apart.
TEST(ReadmeRun, NonZeroExitBlocksCheckTheStderrLine) {
  const Block b = block("exact exit=2", "caching-alloc replay traces/double-free.csv",
                        {"caching-alloc: error: traces/double-free.csv:4: free of a freed block"});
  EXPECT_EQ(
      readme::judge(
          b, {2, "", "caching-alloc: error: traces/double-free.csv:4: free of a freed block\n"}, {})
          .outcome,
      Outcome::kPass);
  const auto missing =
      readme::judge(b, {2, "", "caching-alloc: error: cannot open traces/missing.csv\n"}, {});
  EXPECT_EQ(missing.outcome, Outcome::kFail);
  EXPECT_NE(missing.why.find("cannot open"), std::string::npos) << missing.why;
  EXPECT_EQ(
      readme::judge(
          b, {1, "", "caching-alloc: error: traces/double-free.csv:4: free of a freed block\n"}, {})
          .outcome,
      Outcome::kFail);
}

TEST(ReadmeRun, Exit77IsASkipWithTheStderrReason) {
  const Block b = block("exact", "prog", {"ok"});
  const auto v = readme::judge(b, {77, "", "prog: SKIPPED: no GPU\n"}, {});
  EXPECT_EQ(v.outcome, Outcome::kSkip);
  EXPECT_EQ(v.why, "prog: SKIPPED: no GPU");
}

TEST(ReadmeRun, MissingBenchProgramSkipsOnlyWhereBenchmarksAreNotBuilt) {
  const Block b = block("exact", "bench-simt --benchmark_filter=x", {"ok"});
  const RunResult missing{127, "", "bash: line 1: bench-simt: command not found\n"};
  EXPECT_EQ(readme::judge(b, missing, {/*bench_built=*/false}).outcome, Outcome::kSkip);
  EXPECT_EQ(readme::judge(b, missing, {/*bench_built=*/true}).outcome, Outcome::kFail);
  const Block other = block("exact", "simt-sim", {"ok"});
  EXPECT_EQ(readme::judge(other, missing, {false}).outcome, Outcome::kFail);
}

TEST(ReadmeRun, ReadmeIsSkippedOnlyWhenEveryBlockSkips) {
  using V = readme::Verdict;
  const V pass{Outcome::kPass, ""}, skip{Outcome::kSkip, "no GPU"}, fail{Outcome::kFail, "x"};
  EXPECT_EQ(readme::readme_exit_code({skip, skip}), 77);
  EXPECT_EQ(readme::readme_exit_code({pass, skip}), 0);
  EXPECT_EQ(readme::readme_exit_code({fail, skip}), 1);
  EXPECT_EQ(readme::readme_exit_code({pass, pass}), 0);
}

// The whole program: exit codes ctest sees, and partial skips listed by name.
class ReadmeCheckProgram : public ::testing::Test {
 protected:
  std::filesystem::path dir_;
  void SetUp() override {
    char tmpl[] = "/tmp/readme-check-test-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  RunResult check(const std::string& readme_text, const std::string& flags = "") {
    std::ofstream(dir_ / "README.md") << readme_text;
    return readme::run_command(
        std::string(READMECHECK_EXE) + " README.md --bin /nonexistent --cwd . " + flags,
        "/nonexistent", dir_.string());
  }
};

TEST_F(ReadmeCheckProgram, AllBlocksSkippedIsReportedAsSkipped) {
  const auto r = check(
      "<!-- gpulab-check: exact -->\n```text\n$ echo no GPU >&2; exit 77\n```\n"
      "<!-- gpulab-check: exact -->\n```text\n$ bench-x\n```\n");
  EXPECT_EQ(r.exit_code, 77) << r.out << r.err;
}

TEST_F(ReadmeCheckProgram, PartialSkipsPassAndAreListed) {
  const auto r = check(
      "<!-- gpulab-check: exact -->\n```text\n$ echo hi\nhi\n```\n"
      "<!-- gpulab-check: exact -->\n```text\n$ echo no GPU here >&2; exit 77\n```\n");
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("1 passed, 0 failed, 1 skipped"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("skipped: README.md:8: $ echo no GPU here >&2; exit 77  (no GPU here)"),
            std::string::npos)
      << r.out;
}

TEST_F(ReadmeCheckProgram, MissingBenchFailsWhereBenchmarksAreBuilt) {
  const std::string text = "<!-- gpulab-check: exact -->\n```text\n$ bench-x\n```\n";
  EXPECT_EQ(check(text).exit_code, 77);
  EXPECT_EQ(check(text, "--bench-built").exit_code, 1);
}

TEST_F(ReadmeCheckProgram, HiddenPipelineFailureFails) {
  EXPECT_EQ(
      check("<!-- gpulab-check: exact -->\n```text\n$ { echo 1; exit 1; } | head -n 1\n1\n```\n")
          .exit_code,
      1);
}

TEST_F(ReadmeCheckProgram, WrongIdentityInShapeBlockFails) {
  const std::string text =
      "<!-- gpulab-check: shape tol=any -->\n```text\n$ echo 'exit status 1, rank 2, 0.7 s'\n"
      "exit status 0, rank 0, 0.5 s\n```\n";
  EXPECT_EQ(check(text).exit_code, 1);
}
