// Runs topo-sim the way a user does.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <string>

#include "gpulab/json.hpp"
#include "gpulab_test/program_run.hpp"

namespace {

// topo-sim as a user runs it, stderr merged into what we read.
gpulab_test::ProgramRun run(const std::string& args) {
  return gpulab_test::run_program("topo-sim", args, gpulab_test::Stderr::kMerged);
}

TEST(TopoSimProgram, PrintsTheCurriculumTablesExactly) {
  const auto r = run("");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(r.out.substr(0, r.out.find("\n(The TP cost")),
            "== all-reduce time for an 8-way tensor-parallel group (256 MB activation, x80 layers/step) ==\n"
            "placement                   links          per-step (ms)   vs best\n"
            "TP within 1 NVLink node     NVLink                  44.0      1.0x\n"
            "TP split across 2 nodes     InfiniBand             753.9     17.1x  <- catastrophic\n"
            "TP split across 4 nodes     InfiniBand             753.9     17.1x\n"
            "\n"
            "== data-parallel gradient all-reduce, 4 nodes x 8 GPUs (256 MB) ==\n"
            "flat ring over all 32 GPUs (IB)          : 10.5 ms\n"
            "hierarchical (NVLink in-node, IB across)  : 1.6 ms   (6.7x faster)\n"
            "\n"
            "== failure blast radius (1 GPU dies, synchronous job) ==\n"
            "TP-within-node placement : 1 GPU failure stalls 8 GPUs (one TP group)\n"
            "TP-across-nodes placement: 1 GPU failure stalls 32 GPUs (spans all nodes)\n");
}

TEST(TopoSimProgram, TheCurriculumFileGivesTheSameJsonAsTheDefault) {
  const auto a = run("--json --all");
  const auto b = run("--json --all --topology " + std::string(GPULAB_LAB_DIR) + "/topologies/curriculum.json");
  ASSERT_EQ(a.exit_code, 0) << a.out;
  ASSERT_EQ(b.exit_code, 0) << b.out;
  auto ja = gpulab::Json::parse(a.out);
  auto jb = gpulab::Json::parse(b.out);
  EXPECT_EQ(ja["tp_placement"], jb["tp_placement"]);
  EXPECT_EQ(ja["hierarchical"], jb["hierarchical"]);
  EXPECT_EQ(ja["search_3d"]["results"][0], jb["search_3d"]["results"][0]);
  EXPECT_NEAR(ja["hierarchical"]["speedup"].get<double>(), 6.71, 0.005);
}

TEST(TopoSimProgram, BadInputExits2WithOneLine) {
  const std::string dir = ::testing::TempDir();
  std::ofstream(dir + "/bad.json") << "{\"nodes\": 4,";
  std::ofstream(dir + "/neg.json") << "{\"nodes\": -4, \"gpus_per_node\": 8}";
  for (const std::string& args : {"--topology " + dir + "/bad.json", "--topology " + dir + "/neg.json",
                                 std::string("--topology /nonexistent.json"), std::string("--layers 0"),
                                 std::string("--tp 3"), std::string("--message-mib -1"), std::string("--bogus"),
                                 std::string("calibrate --world 1"), std::string("--topology /"),
                                 std::string("--topology /dev/zero")}) {
    const auto r = run(args);
    EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.out;
    EXPECT_EQ(r.out.rfind("topo-sim: error: ", 0), 0u) << args << "\n" << r.out;
    EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << args << "\n" << r.out;
  }
}

// A directory and an endless device name themselves; a YAML alias bomb fails
// fast instead of expanding a billion nodes.
TEST(TopoSimProgram, UnreadableAndHostileTopologies) {
  EXPECT_EQ(run("--topology /").out, "topo-sim: error: '/' is a directory, not a file\n");
  EXPECT_EQ(run("--topology /dev/zero").out, "topo-sim: error: '/dev/zero' is a device, not a file\n");
  const std::string bomb = ::testing::TempDir() + "/bomb.yaml";
  {
    std::ofstream f(bomb);
    f << "a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n";
    for (char c = 'b'; c <= 'i'; ++c) {
      const char prev = static_cast<char>(c - 1);
      f << c << ": &" << c << " [";
      for (int i = 0; i < 9; ++i) f << (i ? ", *" : "*") << prev;
      f << "]\n";
    }
  }
  const auto r = run("--topology " + bomb);
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("YAML aliases expand to more than 10000 nodes"), std::string::npos) << r.out;
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << r.out;
}

}  // namespace
