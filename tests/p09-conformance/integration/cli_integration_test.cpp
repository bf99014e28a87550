// hal-conformance as a user (or a CI job) runs it: exit codes, the FAIL line
// that names the liar, n/a for undeclared capabilities, JSON and JUnit files,
// and one-line errors for bad flags.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "gpulab_test/program_run.hpp"
#include "junit_schema.hpp"

namespace {

using gpulab_test::ProgramRun;

ProgramRun run(const std::string& args, const std::string& env = "") {
  return gpulab_test::run_program("hal-conformance", args, gpulab_test::Stderr::kSeparate, env);
}

TEST(HalConformanceCli, DefaultRunCatchesTheLiarAndExitsOne) {
  const ProgramRun r = run("--no-perf");
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("FAIL liar/F16/matmul: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("FAIL liar/F16/softmax: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("FAIL: 2 declared capabilities failed: liar/F16/matmul, liar/F16/softmax\n"),
            std::string::npos)
      << r.out;
  // The stale backend is the loader's business: rejected, not a conformance failure.
  EXPECT_NE(r.out.find("rejected stale: abi v1 != core v2"), std::string::npos) << r.out;
  // Nobody else failed anything.
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);)
    if (line.rfind("FAIL ", 0) == 0) {
      EXPECT_EQ(line.rfind("FAIL liar/", 0), 0u) << line;
    }
}

TEST(HalConformanceCli, HonestBackendsPass) {
  const ProgramRun r = run("--skip liar --no-perf");
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(r.out.find("FAIL"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("PASS: all "), std::string::npos) << r.out;
}

TEST(HalConformanceCli, OnlyTheLiarsF16MatmulIsEnoughToFail) {
  const ProgramRun r = run("--backend liar --op matmul --dtype F16 --no-perf");
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("FAIL liar/F16/matmul: 6 of 8 shapes wrong"), std::string::npos) << r.out;
  const ProgramRun f32 = run("--backend liar --dtype F32 --no-perf");
  EXPECT_EQ(f32.exit_code, 0) << f32.out;  // its F32 is honest
}

TEST(HalConformanceCli, UndeclaredIsNotApplicable) {
  const ProgramRun r = run("--backend limited --no-perf");
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  // Rows padded to the widest capability name ("paged_attention BF16").
  auto row = [](const std::string& cap, const std::string& cell) {
    return "\n" + cap + std::string(22 - cap.size(), ' ') + cell + "\n";
  };
  EXPECT_NE(r.out.find(row("softmax F32", "n/a")), std::string::npos) << r.out;  // limited declares no softmax
  EXPECT_NE(r.out.find(row("matmul F16", "n/a")), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(row("matmul F32", "PASS")), std::string::npos) << r.out;
  // limited is built as an ABI 2.1 backend: the decoder-layer ops are not asked.
  EXPECT_NE(r.out.find(row("paged_attention F32", "n/a")), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(row("rmsnorm F32", "n/a")), std::string::npos) << r.out;
}

TEST(HalConformanceCli, TheDecoderLayerOpsPassOnTheReference) {
  const ProgramRun r = run("--backend cpu_ref --op rmsnorm,rope,silu_mul,paged_attention --dtype F32,F16 --no-perf");
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("PASS: all 8 declared capabilities"), std::string::npos) << r.out;
}

TEST(HalConformanceCli, JsonCarriesEveryVerdict) {
  const ProgramRun r = run("--no-perf --json");
  ASSERT_EQ(r.exit_code, 1) << r.err;
  const auto doc = nlohmann::json::parse(r.out);
  EXPECT_EQ(doc["verdict"], "FAIL");
  EXPECT_EQ(doc["failed_capabilities"], nlohmann::json({"liar/F16/matmul", "liar/F16/softmax"}));
  int honest = 0;
  for (const auto& b : doc["backends"]) {
    if (b["name"] == "liar") {
      EXPECT_FALSE(b["conformant"]);
    } else {
      EXPECT_TRUE(b["conformant"]) << b["name"];
      ++honest;
    }
    for (const auto& c : b["capabilities"])
      EXPECT_TRUE(c["verdict"] == "PASS" || c["verdict"] == "FAIL" || c["verdict"] == "n/a");
  }
  EXPECT_GE(honest, 3);  // cpu_ref, fast, limited at least
}

TEST(HalConformanceCli, JunitFileIsValidAndCountsTheLiar) {
  char dir_template[] = "/tmp/hal-conformance-test-XXXXXX";
  ASSERT_NE(mkdtemp(dir_template), nullptr);
  const std::filesystem::path dir(dir_template);
  const std::string file = (dir / "junit.xml").string();
  const ProgramRun r = run("--no-perf --junit " + file);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  std::ifstream in(file);
  const std::string xml((std::istreambuf_iterator<char>(in)), {});
  EXPECT_EQ(junit_schema::validate(xml), "");
  EXPECT_NE(xml.find("<testsuite name=\"liar\""), std::string::npos);
  EXPECT_NE(xml.find("type=\"declared-but-wrong\">FAIL liar/F16/matmul"), std::string::npos);
  EXPECT_NE(xml.find("<skipped message=\"not declared\"/>"), std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST(HalConformanceCli, PerformanceTierAgainstBlasOrTheRoof) {
  const ProgramRun r = run("--backend cpu_ref,blas --perf-size 32 --perf-reps 1");
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("performance tier: F32 matmul 32x32x32, reference "), std::string::npos)
      << r.out;
  // Without a blas backend to compare with, the machine's FMA roof is the reference.
  const ProgramRun roof = run("--backend cpu_ref --reference nosuch --perf-size 32 --perf-reps 1");
  EXPECT_EQ(roof.exit_code, 0) << roof.out << roof.err;
  EXPECT_NE(roof.out.find("reference FMA roof ("), std::string::npos) << roof.out;
  const auto doc =
      nlohmann::json::parse(run("--backend liar --perf-size 32 --perf-reps 1 --json").out);
  EXPECT_EQ(doc["backends"][0]["performance"]["tier"], "not certified");
}

TEST(HalConformanceCli, BackendsComeFromTheEnvironmentToo) {
  // GPULAB_HAL_BACKENDS names one library; GPULAB_HAL_NO_BUILD_DIR keeps the rest out.
  const std::string lib =
      std::string(GPULAB_BIN_DIR) + "/../lib/hal-backends/gpulab-hal-cpu_ref.so";
  const ProgramRun r = run("--no-perf", "env GPULAB_HAL_NO_BUILD_DIR=1 GPULAB_HAL_BACKENDS=" + lib);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("hal-conformance: 1 backend under test"), std::string::npos) << r.out;
}

TEST(HalConformanceCli, NothingToTestIsAFailureNotAPass) {
  char dir_template[] = "/tmp/hal-conformance-empty-XXXXXX";
  ASSERT_NE(mkdtemp(dir_template), nullptr);
  const ProgramRun r = run(std::string("--backend-dir ") + dir_template);
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.err.find("hal-conformance: error: no HAL backend loaded"), std::string::npos)
      << r.err;
  std::filesystem::remove(dir_template);
}

TEST(HalConformanceCli, BadFlagsExitTwoWithOneLine) {
  for (const char* args : {"--backend nosuch", "--skip nosuch", "--dtype F64", "--op conv",
                           "--perf-size 0", "--tier-threshold -5", "--backend-dir /nonexistent/dir",
                           "--junit /nonexistent/dir/x.xml", "--seed banana", "--bogus"}) {
    const ProgramRun r = run(args);
    EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.out << r.err;
    EXPECT_EQ(r.err.rfind("hal-conformance: error: ", 0), 0u) << args << ": " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << args << ": " << r.err;
  }
}

TEST(HalConformanceCli, TierThresholdMustBeFinite) {
  // Before: CLI::Range let NaN through (it compares false both ways) and the run went on.
  for (const char* v : {"nan", "inf", "-inf", "1e309"}) {
    const ProgramRun r = run(std::string("--tier-threshold ") + v);
    EXPECT_EQ(r.exit_code, 2) << v << "\n" << r.out << r.err;
    EXPECT_EQ(r.err, std::string("hal-conformance: error: --tier-threshold: must be a finite number "
                                 "in [0, 1000], got '") +
                         v + "' (see --help)\n");
  }
}

}  // namespace
