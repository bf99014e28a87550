#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

namespace {

struct Result {
  int rc = -1;
  std::string out;
};

Result run(const std::string& args) {
  const std::string cmd = std::string(GPULAB_BIN_DIR) + "/ptx-dissect " + args + " 2>&1";
  Result r;
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) return r;
  std::array<char, 4096> buf{};
  std::size_t got = 0;
  while ((got = fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), got);
  const int status = pclose(p);
  r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

}  // namespace

TEST(PtxDissectCli, LoadTableShowsTheThreeCurriculumOutcomes) {
  const auto r = run("load-table");
  EXPECT_EQ(r.rc, 0) << r.out;
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
    EXPECT_EQ(r.rc, 2) << args << "\n" << r.out;
    EXPECT_EQ(r.out.rfind("ptx-dissect: error: ", 0), 0U) << args << "\n" << r.out;
  }
}

TEST(PtxDissectCli, MissingArtifactsAreASkipNotAFailure) {
  const auto r = run("--artifacts /nonexistent-dir");
  EXPECT_EQ(r.rc, 77) << r.out;
  EXPECT_NE(r.out.find("ptx-dissect: SKIPPED: no nvcc artifacts"), std::string::npos) << r.out;
}
