// The program as a user meets it: exit codes and one-line errors.
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <string>
#include <sys/wait.h>

namespace {

struct ProcResult {
  int code;
  std::string out;
};

ProcResult run(const std::string& args) {
  const std::string cmd = std::string(GPULAB_BIN_DIR) + "/cluster-sim " + args + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  std::string out;
  std::array<char, 4096> buf{};
  while (std::fgets(buf.data(), buf.size(), p) != nullptr) out += buf.data();
  const int status = pclose(p);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

std::string temp_trace(const std::string& text) {
  const std::string path = testing::TempDir() + "/cluster_sim_bad.csv";
  std::ofstream(path) << text;
  return path;
}

}  // namespace

TEST(Cli, DefaultRunPrintsBothCurriculumTables) {
  const ProcResult r = run("");
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.out.find("spread             60.9"), std::string::npos);
  EXPECT_NE(r.out.find("naive_no_gang : 0/3 jobs completed"), std::string::npos);
}

TEST(Cli, MalformedTraceRowIsOneLineAndExit2) {
  const std::string path = temp_trace("A,0,2,10\nB,0,two,10\n");
  const ProcResult r = run("run --trace " + path);
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.out, "cluster-sim: error: " + path + ":2: gpus must be a whole number >= 1, got 'two'\n");
}

TEST(Cli, BadFlagsExit2) {
  EXPECT_EQ(run("run --trace /nonexistent.csv").code, 2);
  EXPECT_EQ(run("run --generate 10 --policy random").code, 2);
  EXPECT_EQ(run("run --generate 10 --nodes 0").code, 2);
  EXPECT_EQ(run("run --generate 10 --gpus-per-node 100").code, 2);
  EXPECT_EQ(run("run --generate 10 --queue lifo").code, 2);
  EXPECT_EQ(run("run").code, 2);
  EXPECT_EQ(run("--no-such-flag").code, 2);
  EXPECT_EQ(run("run --generate 10 --trace x.csv").code, 2);
}

TEST(Cli, HelpExitsZero) { EXPECT_EQ(run("--help").code, 0); }

TEST(Cli, SameSeedSameTable) {
  const ProcResult a = run("run --generate 500 --seed 9 --gang");
  const ProcResult b = run("run --generate 500 --seed 9 --gang");
  const ProcResult c = run("run --generate 500 --seed 10 --gang");
  EXPECT_EQ(a.code, 0);
  EXPECT_EQ(a.out, b.out);
  EXPECT_NE(a.out, c.out);
}

TEST(Cli, ExtensionsAllPass) {
  const ProcResult r = run("extensions");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(r.out.find("FAIL"), std::string::npos);
}
