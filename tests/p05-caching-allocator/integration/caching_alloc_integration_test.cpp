// Runs the caching-alloc program the way a learner does: demos, subcommands,
// and the bad inputs that must end in one error line and exit 2.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "gpulab_test/program_run.hpp"

namespace {

using gpulab_test::ProgramRun;

// stdout and stderr together, as a user sees them in a terminal.
ProgramRun run(const std::string& args) {
  return gpulab_test::run_program("caching-alloc", args, gpulab_test::Stderr::kMerged);
}

std::string write_temp(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + "/" + name;
  std::ofstream(path) << text;
  return path;
}

TEST(CachingAllocProgram, DemosPrintTheCurriculumLines) {
  const ProgramRun r = run("");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("interleaved (mixed)    free=128 MB  largest hole=  8 MB  16MB alloc: FAILS "
                       "(fragmented!)"),
            std::string::npos);
  EXPECT_NE(r.out.find("caching    :     1 device mallocs,  4999 bin hits, 0 device frees"),
            std::string::npos);
}

TEST(CachingAllocProgram, MalformedTraceIsOneErrorLineAndExit2) {
  const std::string path =
      write_temp("bad.csv", "op,id,size,stream\nalloc,a,1024,0\nalloc,b,lots,0\n");
  const ProgramRun r = run("replay " + path);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, "caching-alloc: error: " + path +
                       ": line 3: size 'lots' is not a byte count between 1 and 2^48\n");
}

TEST(CachingAllocProgram, DoubleFreeAndUnknownIdAreRefused) {
  const ProgramRun dbl =
      run("replay " + write_temp("dbl.csv", "alloc,a,1024,0\nfree,a,,\nfree,a,,\n"));
  EXPECT_EQ(dbl.exit_code, 2);
  EXPECT_NE(dbl.out.find("line 3: double free of id 'a'"), std::string::npos) << dbl.out;
  const ProgramRun unk = run("metrics " + write_temp("unk.csv", "free,ghost,,\n"));
  EXPECT_EQ(unk.exit_code, 2);
  EXPECT_NE(unk.out.find("line 1: free of unknown id 'ghost'"), std::string::npos) << unk.out;
  EXPECT_EQ(unk.out.find("gpulab_allocator"), std::string::npos)
      << "no metrics from a refused trace";
}

TEST(CachingAllocProgram, MissingFileAndBadFlagsExit2) {
  EXPECT_EQ(run("replay /nonexistent/trace.csv").exit_code, 2);
  // A directory or an endless device is one error line naming it, read under the size cap.
  const ProgramRun dir = run("metrics /");
  EXPECT_EQ(dir.exit_code, 2);
  EXPECT_EQ(dir.out, "caching-alloc: error: '/' is a directory, not a file\n");
  const ProgramRun zero = run("replay /dev/zero");
  EXPECT_EQ(zero.exit_code, 2);
  EXPECT_EQ(zero.out, "caching-alloc: error: '/dev/zero' is a device, not a file\n");
  EXPECT_EQ(run("replay").exit_code, 2);
  EXPECT_EQ(run("--bogus").exit_code, 2);
  EXPECT_EQ(run("replay traces/sample.csv --fit worst").exit_code, 2);
  EXPECT_EQ(run("replay traces/sample.csv --capacity-mib 0").exit_code, 2);
  EXPECT_EQ(run("fit --steps -3").exit_code, 2);
}

TEST(CachingAllocProgram, ReplayJsonAndMetrics) {
  const std::string trace = std::string(GPULAB_LAB_DIR) + "/traces/sample.csv";
  const ProgramRun j = run("replay " + trace + " --json");
  EXPECT_EQ(j.exit_code, 0) << j.out;
  EXPECT_EQ(j.out.front(), '{');
  EXPECT_NE(j.out.find("\"cross_stream_syncs\": 2"), std::string::npos) << j.out;
  const ProgramRun m = run("metrics " + trace);
  EXPECT_EQ(m.exit_code, 0);
  EXPECT_NE(m.out.find("# TYPE gpulab_allocator_reserved_bytes gauge"), std::string::npos);
}

}  // namespace
