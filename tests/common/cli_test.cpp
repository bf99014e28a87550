#include "gpulab/cli.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "gpulab/version.hpp"

namespace {

int run(std::vector<std::string> args, const std::function<int()>& body) {
  CLI::App app{"test"};
  int n = 0;
  app.add_option("--n", n);
  std::vector<char*> argv;
  args.insert(args.begin(), "prog");
  for (auto& a : args) argv.push_back(a.data());
  return gpulab::run_program("prog", app, static_cast<int>(argv.size()), argv.data(), body);
}

}  // namespace

TEST(Cli, ExitCodesFollowTheConventions) {
  EXPECT_EQ(run({}, [] { return 0; }), gpulab::kExitOk);
  EXPECT_EQ(run({"--bogus"}, [] { return 0; }), gpulab::kExitUsage);
  EXPECT_EQ(run({"--n", "x"}, [] { return 0; }), gpulab::kExitUsage);
  EXPECT_EQ(run({}, []() -> int { throw gpulab::UsageError("bad file"); }), gpulab::kExitUsage);
  EXPECT_EQ(run({}, []() -> int { throw gpulab::RunError("check failed"); }), gpulab::kExitCheckFailed);
  EXPECT_EQ(run({}, []() -> int { throw gpulab::Unsupported("no GPU"); }), gpulab::kExitSkipped);
  EXPECT_EQ(run({"--help"}, [] { return 5; }), gpulab::kExitOk);
}

TEST(Cli, ErrorLineHasProgramPrefix) {
  testing::internal::CaptureStderr();
  EXPECT_EQ(run({}, []() -> int { throw gpulab::UsageError("size must be > 0"); }), 2);
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "prog: error: size must be > 0\n");
  testing::internal::CaptureStderr();
  EXPECT_EQ(run({}, []() -> int { throw gpulab::Unsupported("no CUDA device"); }), 77);
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "prog: SKIPPED: no CUDA device\n");
}

TEST(Cli, VersionPrintsTheProgramAndTheProjectVersion) {
  testing::internal::CaptureStdout();
  EXPECT_EQ(run({"--version"}, [] { return 5; }), gpulab::kExitOk);  // the body never runs
  EXPECT_EQ(testing::internal::GetCapturedStdout(),
            "prog " + std::string(gpulab::version()) + "\n");
  EXPECT_EQ(gpulab::version_line("gpulabd"), "gpulabd " + std::string(gpulab::version()));
  // MAJOR.MINOR.PATCH, as project(VERSION) writes it.
  const std::string v(gpulab::version());
  EXPECT_EQ(std::count(v.begin(), v.end(), '.'), 2) << v;
  EXPECT_EQ(v.find_first_not_of("0123456789."), std::string::npos) << v;
}
