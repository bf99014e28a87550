// Runs stream-sched the way a learner does.
#include <gtest/gtest.h>

#include <string>

#include "gpulab_test/program_run.hpp"

namespace {

using gpulab_test::ProgramRun;

// stdout and stderr together, as a user sees them in a terminal.
ProgramRun run(const std::string& args) {
  return gpulab_test::run_program("stream-sched", args, gpulab_test::Stderr::kMerged);
}

TEST(StreamSchedProgram, VirtualClockPrintsExactCurriculumLines) {
  const ProgramRun r = run("--clock virtual --quick");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("[scenario 1] serial=280ms  pipelined=140ms  speedup=2.00x   PASS (>=1.7x)"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("[scenario 3] host-ordered free: CORRUPTION detected (as expected)"),
            std::string::npos);
  EXPECT_NE(r.out.find("[scenario 4] acyclic accepted / circular wait detected   PASS"),
            std::string::npos);
}

TEST(StreamSchedProgram, BadUsageExits2WithOneErrorLine) {
  for (const char* args :
       {"--clock sundial", "--trials 0", "--trials abc", "graph --reps -1", "nonsense"}) {
    const ProgramRun r = run(args);
    EXPECT_EQ(r.exit_code, 2) << args;
    EXPECT_EQ(r.out.rfind("stream-sched: error: ", 0), 0u) << args << ": " << r.out;
  }
}

TEST(StreamSchedProgram, JsonIsOneDocument) {
  const ProgramRun r = run("--clock virtual --quick --json");
  EXPECT_EQ(r.exit_code, 0);
  ASSERT_FALSE(r.out.empty());
  EXPECT_EQ(r.out.front(), '{');
  EXPECT_NE(r.out.find("\"pipelined_ms\": 140"), std::string::npos) << r.out;
}

TEST(StreamSchedProgram, PrioritySubcommandVirtual) {
  const ProgramRun r = run("priority --clock virtual");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("latency op finishes ahead of the bulk work  PASS"), std::string::npos)
      << r.out;
}

}  // namespace
