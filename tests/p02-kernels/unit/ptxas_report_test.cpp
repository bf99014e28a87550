#include "kernels/ptxas_report.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "kernels/report.hpp"

using namespace kernels;

namespace {
// Real nvcc 13.0 -Xptxas=-v lines for two of this lab's kernels (sm_90).
constexpr const char* kSample =
    "ptxas info    : 0 bytes gmem\n"
    "ptxas info    : Compiling entry function "
    "'_ZN7kernels50_GLOBAL__N__b4845e08_17_device_kernels_cu_7dff670c7vec_addILb1EEEvPKfS3_Pfi' "
    "for 'sm_90'\n"
    "ptxas info    : Function properties for "
    "_ZN7kernels50_GLOBAL__N__b4845e08_17_device_kernels_cu_7dff670c7vec_addILb1EEEvPKfS3_Pfi\n"
    "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
    "ptxas info    : Used 12 registers, used 0 barriers\n"
    "ptxas info    : Compiling entry function "
    "'_ZN7kernels50_GLOBAL__N__b4845e08_17_device_kernels_cu_7dff670c18matmul_micro8x8_lbEPKfS2_"
    "Pfi' for 'sm_90'\n"
    "ptxas info    : Function properties for "
    "_ZN7kernels50_GLOBAL__N__b4845e08_17_device_kernels_cu_7dff670c18matmul_micro8x8_lbEPKfS2_"
    "Pfi\n"
    "    448 bytes stack frame, 1420 bytes spill stores, 1264 bytes spill loads\n"
    "ptxas info    : Used 64 registers, used 1 barriers, 448 bytes cumulative stack size, 8192 "
    "bytes smem\n";
}  // namespace

TEST(PtxasReport, ParsesRegistersSpillsAndSharedMemory) {
  const auto e = parse_ptxas_report(kSample);
  ASSERT_EQ(e.size(), 2u);
  EXPECT_EQ(e[0].kernel, "vec_add<true>");
  EXPECT_EQ(e[0].arch, "sm_90");
  EXPECT_EQ(e[0].registers, 12);
  EXPECT_EQ(e[0].smem_bytes, 0);
  EXPECT_EQ(e[1].kernel, "matmul_micro8x8_lb");
  EXPECT_EQ(e[1].registers, 64);
  EXPECT_EQ(e[1].spill_store_bytes, 1420);
  EXPECT_EQ(e[1].spill_load_bytes, 1264);
  EXPECT_EQ(e[1].stack_bytes, 448);
  EXPECT_EQ(e[1].smem_bytes, 8192);
}

TEST(PtxasReport, IgnoresNoiseAndKeepsUndemanglableNames) {
  EXPECT_TRUE(parse_ptxas_report("nothing here\n").empty());
  EXPECT_EQ(short_kernel_name("plain_c_kernel"), "plain_c_kernel");
  EXPECT_EQ(short_kernel_name("_ZN7kernels12matmul_microILi64ELi64ELi16ELi4ELi4EEEvPKfS2_Pfi"),
            "matmul_micro<64, 64, 16, 4, 4>");
}

// The build compiles the CUDA sources whenever nvcc exists; the report proves ptxas ran on all of
// them.
TEST(PtxasReport, BuildCompiledEveryKernelWhenNvccExists) {
  const std::string path = default_ptxas_report_path();
  if (path.empty()) GTEST_SKIP() << "built without a CUDA compiler";
  std::ifstream in(path);
  ASSERT_TRUE(in) << path;
  std::stringstream text;
  text << in.rdbuf();
  const auto entries = parse_ptxas_report(text.str());
  // vec_add x2, copy, naive, tiled x2, rect, micro x3, micro8x8_lb, scale_in_place (--pitfall host-pointer)
  EXPECT_EQ(entries.size(), 12u);
  bool bounded_found = false;
  for (const auto& e : entries) {
    EXPECT_EQ(e.arch, "sm_90");
    if (e.kernel == "matmul_micro8x8_lb") {
      bounded_found = true;
      EXPECT_LE(e.registers, 64);  // __launch_bounds__(256, 4): 65,536 / (4 * 256)
    }
  }
  EXPECT_TRUE(bounded_found);
}
