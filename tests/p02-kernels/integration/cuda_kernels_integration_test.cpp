// Runs the cuda-kernels program the way a user would.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "gpulab_test/program_run.hpp"
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

using Result = gpulab_test::ProgramRun;  // out holds stdout and stderr

Result run(const std::string& args) {
  return gpulab_test::run_program("cuda-kernels", args, gpulab_test::Stderr::kMerged);
}

}  // namespace

// With a GPU the same run must measure and verify every kernel; exit 0 alone proves nothing.
void expect_every_kernel_verified_on_the_gpu() {
  const gpulab_test::ProgramRun j = gpulab_test::run_program(
      "cuda-kernels", "--n 128 --vec-n 1000 --reps 1 --json", gpulab_test::Stderr::kSeparate);
  ASSERT_EQ(j.exit_code, 0) << j.out << j.err;
  const auto doc = nlohmann::json::parse(j.out, nullptr, false);
  ASSERT_TRUE(doc.is_object()) << j.out;
  EXPECT_EQ(doc.value("all_checks_pass", false), true) << j.out;
  EXPECT_FALSE(doc["device"].value("name", "").empty()) << j.out;
  std::size_t rows = 0;
  for (const char* table : {"memory", "matmul"})
    for (const auto& row : doc[table]) {
      ++rows;
      EXPECT_TRUE(row.value("ok", false)) << row.dump();
      EXPECT_GT(row.value("event_median_ms", 0.0), 0.0) << row.dump();
    }
  EXPECT_GE(rows, 2u) << "a GPU run must report vec_add and at least one matmul: " << j.out;
}

TEST(CudaKernelsProgram, WithoutAGpuSkipsWithTheReason) {
  const Result r = run("--n 128 --vec-n 1000 --reps 1");
  if (r.exit_code == 0) {
    expect_every_kernel_verified_on_the_gpu();
    if (HasFailure()) return;
    GTEST_SKIP() << "a GPU is present (its run was verified above): the no-GPU path is not reachable here";
  }
  EXPECT_EQ(r.exit_code, 77) << r.out;
  EXPECT_NE(r.out.find("cuda-kernels: SKIPPED: no CUDA device ("), std::string::npos) << r.out;
  // Which back end answered: the CUDA one asks the runtime; the build without nvcc says so.
#ifdef KERNELS_HAVE_CUDA
  EXPECT_NE(r.out.find("cudaGetDeviceCount"), std::string::npos) << r.out;
#else
  EXPECT_NE(r.out.find("this build has no CUDA compiler"), std::string::npos) << r.out;
#endif
}

TEST(CudaKernelsProgram, BadInputIsAOneLineUsageError) {
  for (const char* args :
       {"--n 1000", "--n -128", "--n abc", "--reps 0", "--vec-n 0", "--kernels tiled,bogus",
        "--bogus-flag", "--rtol -1", "--rtol 2", "model --gpu v100", "model --n 100",
        "launch --size 0x10", "launch --size 12xx", "launch --block 2048"}) {
    const Result r = run(args);
    EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.out;
    EXPECT_EQ(r.out.rfind("cuda-kernels: error: ", 0), 0u) << args << "\n" << r.out;
  }
}

TEST(CudaKernelsProgram, AnOverflowingSizeIsRefused) {
  // Before: 99999999999 x 99999999999 wrapped around 2^64 and printed a bogus grid.
  const Result r = run("launch --size 99999999999x99999999999");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_EQ(r.out,
            "cuda-kernels: error: --size '99999999999x99999999999': W x H does not fit in 64 "
            "bits\n");
}

TEST(CudaKernelsProgram, SavedReportsMustBeFiles) {
  // Read before gnuplot is needed, so this runs without it.
  const std::string svg = testing::TempDir() + "kernels-roofline-dir.svg";
  Result r = run("model --plot " + svg + " --measured /tmp");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_EQ(r.out, "cuda-kernels: error: --measured: '/tmp' is a directory, not a file\n");
  r = run("model --plot " + svg + " --measured /dev/zero");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_EQ(r.out, "cuda-kernels: error: --measured: '/dev/zero' is a device, not a file\n");
  r = run("ptxas --report /dev/zero");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_EQ(r.out, "cuda-kernels: error: --report: '/dev/zero' is a device, not a file\n");
}

TEST(CudaKernelsProgram, ModelAndLaunchRunWithoutAGpu) {
  const Result m = run("model --n 1024 --gpu t4");
  EXPECT_EQ(m.exit_code, 0) << m.out;
  EXPECT_NE(m.out.find("naive"), std::string::npos);
  const Result l = run("launch --size 1920x1080 --block 16x16");
  EXPECT_EQ(l.exit_code, 0) << l.out;
  EXPECT_NE(l.out.find("120 x 68"), std::string::npos) << l.out;
  const Result bad = run("launch --size 1x100000000 --block 1x1");
  EXPECT_EQ(bad.exit_code, 1) << bad.out;  // grid.y over 65,535: reported, not launched
  EXPECT_NE(bad.out.find("INVALID"), std::string::npos) << bad.out;
}

TEST(CudaKernelsProgram, JsonIsOneDocument) {
  const Result r = run("model --json");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out.front(), '{');
}

TEST(CudaKernelsProgram, ModelDrawsTheRoofline) {
  if (std::system("command -v gnuplot >/dev/null 2>&1") != 0)
    GTEST_SKIP() << "gnuplot is not installed";
  const std::string svg = testing::TempDir() + "kernels-roofline.svg";
  std::remove(svg.c_str());
  const Result r = run("model --gpu h200 --plot " + svg);
  EXPECT_EQ(r.exit_code, 0) << r.out;
  FILE* f = std::fopen(svg.c_str(), "r");
  ASSERT_NE(f, nullptr) << "no SVG written";
  std::array<char, 5> head{};
  EXPECT_EQ(std::fread(head.data(), 1, 4, f), 4u);
  std::fclose(f);
  EXPECT_EQ(std::string(head.data()), "<?xm");
  const Result bad = run("model --plot " + svg + " --measured /nonexistent.json");
  EXPECT_EQ(bad.exit_code, 2) << bad.out;
  const Result lonely = run("model --measured x.json");
  EXPECT_EQ(lonely.exit_code, 2) << lonely.out;
}
