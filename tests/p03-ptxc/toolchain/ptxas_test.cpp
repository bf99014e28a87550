// Real-toolchain validation: NVIDIA's own assembler must accept every PTX
// module ptxc emits for the built-in suite, at -O0 and -O1, for Ampere and
// Hopper. Skips (with the reason) where ptxas is not installed.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <ostream>
#include <string>

#include "ptxc/compiler.hpp"
#include "ptxc/suite.hpp"

namespace {

struct Case {
  int level;
  const char* arch;    // ptxas -arch
  const char* target;  // ptxc --target (.target and .version of the module)
  bool guard = true;
};

void PrintTo(const Case& c, std::ostream* os) {
  *os << "-O" << c.level << " --target " << c.target << (c.guard ? "" : " --no-guard")
      << " | ptxas -arch=" << c.arch;
}

class Ptxas : public testing::TestWithParam<Case> {};

TEST_P(Ptxas, AcceptsTheSuitePtx) {
  const std::string ptxas = PTXC_PTXAS;
  if (ptxas.empty() || ptxas.find("NOTFOUND") != std::string::npos ||
      access(ptxas.c_str(), X_OK) != 0)
    GTEST_SKIP() << "ptxas not found at configure time (install the CUDA Toolkit)";
  const auto [level, arch, target, guard] = GetParam();
  auto opts = ptxc::CompileOptions::at_level(level);
  opts.emit.target = target;
  opts.emit.guard = guard;
  const auto c = ptxc::compile(ptxc::builtin_suite_source(), "<suite>", opts);
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

// The default .target sm_75 module assembled for Ampere and Hopper, the
// sm_90 module (.version 7.8) for Hopper, and the deliberately unguarded one.
INSTANTIATE_TEST_SUITE_P(Suite, Ptxas,
                         testing::Values(Case{0, "sm_80", "sm_75"}, Case{1, "sm_80", "sm_75"},
                                         Case{0, "sm_90", "sm_75"}, Case{1, "sm_90", "sm_75"},
                                         Case{1, "sm_90", "sm_90"},
                                         Case{1, "sm_80", "sm_80", false}),
                         [](const testing::TestParamInfo<Case>& info_) {
                           const Case& c = info_.param;
                           return std::string("O") + std::to_string(c.level) + "_" + c.arch +
                                  "_target_" + c.target + (c.guard ? "" : "_noguard");
                         });

}  // namespace
