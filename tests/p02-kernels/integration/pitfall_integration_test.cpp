// --pitfall host-pointer: the flag, the clear exit without a GPU (with one, the
// run must say which call reported the fault), and the build-time evidence
// that nothing catches the pitfall before it runs: ptxas compiles the kernel
// like any other.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "gpulab_test/program_run.hpp"

namespace {

gpulab_test::ProgramRun run(const std::string& args) {
  return gpulab_test::run_program("cuda-kernels", args, gpulab_test::Stderr::kMerged);
}

TEST(CudaKernelsPitfall, AnUnknownPitfallIsAUsageError) {
  const auto r = run("--pitfall device-pointer");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_EQ(r.out.rfind("cuda-kernels: error: --pitfall: device-pointer not in {host-pointer}", 0), 0u) << r.out;
}

TEST(CudaKernelsPitfall, HostPointerSaysWhichCallReportedItOrSkipsWithoutAGpu) {
  const auto r = gpulab_test::run_program("cuda-kernels", "--pitfall host-pointer --json",
                                          gpulab_test::Stderr::kSeparate);
  if (r.exit_code == 77) {
    EXPECT_NE(r.err.find("cuda-kernels: SKIPPED: no CUDA device ("), std::string::npos) << r.err;
#ifdef KERNELS_HAVE_CUDA
    EXPECT_NE(r.err.find("cudaGetDeviceCount"), std::string::npos) << r.err;
#endif
    GTEST_SKIP() << "no GPU here: " << r.err;
  }
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto doc = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_TRUE(doc.is_object()) << r.out;
  const std::string first = doc.value("first_reported_by", "?");
  if (doc.value("host_doubled", false)) {
    EXPECT_EQ(first, "") << "the kernel reached host memory, yet a call failed: " << r.out;
  } else {
    // The fault is reported somewhere, and a sticky error stays after the synchronize.
    EXPECT_NE(first, "") << r.out;
    EXPECT_NE(doc.value("after_sync", ""), "cudaSuccess") << r.out;
  }
}

TEST(CudaKernelsPitfall, PtxasCompiledThePitfallKernelLikeAnyOther) {
  const auto r = run("ptxas");
  if (r.exit_code == 77) GTEST_SKIP() << "this build has no CUDA compiler: " << r.out;
  ASSERT_EQ(r.exit_code, 0) << r.out;
  // The kernel that gets a host pointer at run time is in the build's register report:
  // its pointer parameter is an address like any other, and nothing at build time objects.
  EXPECT_NE(r.out.find("scale_in_place"), std::string::npos) << r.out;
}

}  // namespace
