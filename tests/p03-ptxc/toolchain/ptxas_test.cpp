// Real-toolchain validation: NVIDIA's own assembler must accept every PTX
// module ptxc emits for the built-in suite, at -O0 and -O1, for Ampere and
// Hopper. Skips (with the reason) where ptxas is not installed.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "ptxc/compiler.hpp"
#include "ptxc/suite.hpp"

namespace {

struct Case {
  int level;
  const char* arch;
};

class Ptxas : public testing::TestWithParam<Case> {};

TEST_P(Ptxas, AcceptsTheSuitePtx) {
  const std::string ptxas = PTXC_PTXAS;
  if (ptxas.empty() || ptxas.find("NOTFOUND") != std::string::npos ||
      access(ptxas.c_str(), X_OK) != 0)
    GTEST_SKIP() << "ptxas not found at configure time (install the CUDA Toolkit)";
  const auto [level, arch] = GetParam();
  const auto c =
      ptxc::compile(ptxc::builtin_suite_source(), "<suite>", ptxc::CompileOptions::at_level(level));
  char dir_template[] = "/tmp/ptxc-ptxas-XXXXXX";
  ASSERT_NE(mkdtemp(dir_template), nullptr);
  const std::string dir = dir_template;
  { std::ofstream(dir + "/suite.ptx") << c.ptx; }
  const std::string cmd = ptxas + " -arch=" + arch + " -o " + dir + "/suite.cubin " + dir +
                          "/suite.ptx 2> " + dir + "/log.txt";
  const int rc = std::system(cmd.c_str());
  std::ifstream log(dir + "/log.txt");
  const std::string text((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
  EXPECT_TRUE(WIFEXITED(rc) && WEXITSTATUS(rc) == 0) << cmd << "\n" << text << "\n" << c.ptx;
  std::remove((dir + "/suite.ptx").c_str());
  std::remove((dir + "/suite.cubin").c_str());
  std::remove((dir + "/log.txt").c_str());
  rmdir(dir.c_str());
}

INSTANTIATE_TEST_SUITE_P(Suite, Ptxas,
                         testing::Values(Case{0, "sm_80"}, Case{1, "sm_80"}, Case{0, "sm_90"},
                                         Case{1, "sm_90"}),
                         [](const testing::TestParamInfo<Case>& param_info) {
                           return std::string("O") + std::to_string(param_info.param.level) + "_" +
                                  param_info.param.arch;
                         });

}  // namespace
