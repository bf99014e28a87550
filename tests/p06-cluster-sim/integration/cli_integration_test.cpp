// The program as a user meets it: exit codes and one-line errors.
#include <gtest/gtest.h>

#include "gpulab_test/program_run.hpp"

#include <algorithm>
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

// `run --inventory` takes the cluster from node inventories: the same run as
// the equivalent flags, byte for byte.
TEST(Cli, AnInventoryIsTheSameClusterAsItsFlags) {
  const std::string path = testing::TempDir() + "/cluster_sim_inventory.json";
  std::string nodes;
  for (int n = 0; n < 2; ++n) {
    std::string gpus;
    for (int i = 0; i < 8; ++i)
      gpus +=
          std::string(i ? "," : "") + R"({"id": "gpu)" + std::to_string(i) + R"(", "index": )" +
          std::to_string(i) +
          R"(, "vendor": "nvidia", "backend": "cuda", "model": "H100", "memory_bytes": 85899345920, )" +
          R"("domain": {"island": "n)" + std::to_string(n) + "-" + std::to_string(i / 4) + R"("}})";
    nodes += std::string(n ? "," : "") + R"({"node": "node)" + std::to_string(n) +
             R"(", "cpus": 64, "accelerators": [)" + gpus + "]}";
  }
  std::ofstream(path) << "[" << nodes << "]";
  const std::string common =
      "run --trace " + std::string(GPULAB_LAB_DIR) + "/traces/topology.csv --policy topology_aware";
  const gpulab_test::ProgramRun flags =
      run(common + " --nodes 2 --gpus-per-node 8 --island-size 4 --cpus-per-node 64");
  const gpulab_test::ProgramRun inventory = run(common + " --inventory " + path);
  EXPECT_EQ(flags.exit_code, 0) << flags.out;
  EXPECT_EQ(inventory.exit_code, 0) << inventory.out;
  EXPECT_EQ(inventory.out, flags.out);
  EXPECT_EQ(run(common + " --inventory " + path + " --nodes 3").exit_code, 2)
      << "the inventory sets the shape";

  std::ofstream(path)
      << R"([{"node": "a", "accelerators": [{"id": "g", "index": 0, "vendor": "nvidia",
                            "backend": "cuda", "model": "H100", "memory_bytes": 0}]}])";
  const gpulab_test::ProgramRun bad = run(common + " --inventory " + path);
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_EQ(bad.out, "cluster-sim: error: " + path +
                         ": nodes[0].accelerators[0].memory_bytes: 0 is absurd (1 byte to 64 TiB; "
                         "the field is in bytes)\n");
}

// Extension 5 from the command line: the flags of `run`, the seeded table, and
// one clear line for every impossible pool setting.
// Runs of blanks as one, so a check does not depend on column widths.
std::string squeeze(const std::string& s) {
  std::string out;
  for (const char c : s)
    if (c != ' ' || out.empty() || out.back() != ' ') out += c;
  return out;
}

TEST(Cli, ReservedPoolAndDefragFromTheCommandLine) {
  const std::string path = testing::TempDir() + "/cluster_sim_spread.csv";
  std::ofstream(path) << "S1,0,1,100\nS2,0,1,100\nS3,0,1,100\nS4,0,1,100\nL,1,8,10\n";
  const std::string common = "run --trace " + path + " --nodes 2 --gpus-per-node 8 --policy spread --gang";
  // L is not large at --large-gpus 9: nothing moves and it waits 99 for the small jobs.
  const std::string shared = squeeze(run(common + " --defrag --large-gpus 9").out);
  EXPECT_NE(shared.find("p99 wait 95.0"), std::string::npos) << shared;
  EXPECT_NE(shared.find("migrations 0 moves"), std::string::npos) << shared;
  const std::string reserved = squeeze(run(common + " --reserve-nodes 1").out);
  EXPECT_NE(reserved.find("1 nodes reserved for >= 4 GPUs"), std::string::npos) << reserved;
  EXPECT_NE(reserved.find("large mean wait 0.0"), std::string::npos) << reserved;
  EXPECT_NE(reserved.find("p99 wait 0.0"), std::string::npos) << reserved;
  const std::string moved = squeeze(run(common + " --defrag").out);
  EXPECT_NE(moved.find("migrations 2 moves"), std::string::npos) << moved;
  EXPECT_NE(moved.find("p99 wait 0.0"), std::string::npos) << moved;

  const gpulab_test::ProgramRun a = run("fragmentation --json");
  EXPECT_EQ(a.exit_code, 0) << a.out;
  EXPECT_EQ(a.out, run("fragmentation --json").out);
  EXPECT_NE(a.out, run("fragmentation --json --seed 4").out);

  for (const char* args :
       {"run --generate 10 --gang --nodes 4 --reserve-nodes 4", "run --generate 10 --gang --reserve-nodes -1",
        "run --generate 10 --reserve-nodes 1", "run --generate 10 --gang --large-gpus 0",
        "run --generate 10 --gang --large-gpus nan", "fragmentation --reserve-nodes 8",
        "fragmentation --load nan", "fragmentation --jobs 0", "fragmentation --checkpoint-penalty -1"}) {
    const gpulab_test::ProgramRun r = run(args);
    EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.out;
    EXPECT_EQ(r.out.rfind("cluster-sim: error: ", 0), 0u) << args << "\n" << r.out;
    EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << args << "\n" << r.out;
  }
}
