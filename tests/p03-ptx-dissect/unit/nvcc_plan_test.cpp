// nvcc -dryrun's plan read into steps, on nvcc 13.0's real output for
// `nvcc -dryrun -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=compute_90
//  -c kernels.cu -o kernels.o` (fixtures/nvcc13-dryrun.txt; PATH and the source
// directory replaced by neutral ones).
#include "ptx_dissect/nvcc_plan.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace {

std::string fixture() {
  std::ifstream in(std::filesystem::path(GPULAB_LAB_DIR) /
                   "../../tests/p03-ptx-dissect/fixtures/nvcc13-dryrun.txt");
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

using Strings = std::vector<std::string>;

}  // namespace

TEST(NvccPlan, TheCurriculumsPipelineInNvccsOwnSteps) {
  const auto steps = ptx_dissect::parse_nvcc_dryrun(fixture());
  Strings tools;
  for (const auto& s : steps) tools.push_back(s.tool);
  EXPECT_EQ(tools, (Strings{"gcc", "cudafe++", "gcc", "cicc", "ptxas", "gcc", "cicc", "ptxas",
                            "fatbinary", "rm", "gcc"}));
  // cicc reads the device-preprocessed source and writes PTX; ptxas turns it into a cubin.
  EXPECT_EQ(steps[3].stage, "device C++ -> NVVM IR -> PTX for compute_80");
  EXPECT_EQ(steps[3].reads, Strings{"kernels.compute_80.cpp1.ii"});
  EXPECT_EQ(steps[3].writes, Strings{"kernels.compute_80.ptx"});
  EXPECT_EQ(steps[4].stage, "PTX -> SASS for sm_80 (registers, scheduling)");
  EXPECT_EQ(steps[4].writes, Strings{"kernels.compute_80.cubin"});
  // code=compute_90 ships PTX: ptxas only checks it and writes nothing.
  EXPECT_EQ(steps[7].stage, "check the PTX assembles (compute_90: shipped as PTX)");
  EXPECT_TRUE(steps[7].writes.empty());
  EXPECT_EQ(steps[8].stage, "bundle sm_80 SASS + compute_90 PTX into the fatbin");
  EXPECT_EQ(steps[8].reads, (Strings{"kernels.compute_80.cubin", "kernels.compute_90.ptx"}));
  EXPECT_EQ(steps[8].writes, Strings{"kernels.fatbin.c"});
  // cudafe++'s host file is what the last gcc compiles.
  EXPECT_EQ(steps[1].writes, Strings{"kernels.compute_90.cudafe1.cpp"});
  EXPECT_EQ(steps[10].reads, steps[1].writes);
  EXPECT_EQ(steps[10].writes, Strings{"kernels.o"});
  EXPECT_EQ(steps[0].stage, "preprocess for the host");
  EXPECT_EQ(steps[2].stage, "preprocess for the device (__CUDA_ARCH__=800)");
}

TEST(NvccPlan, TemporaryNamesLoseTheirPerRunPrefix) {
  EXPECT_EQ(
      ptx_dissect::normalise_temp_path("/tmp/tmpxft_0000744b_00000000-7_kernels.compute_80.ptx"),
      "kernels.compute_80.ptx");
  EXPECT_EQ(ptx_dissect::normalise_temp_path("tmpxft_00000e6a_00000000-10_k.cpp1.ii"), "k.cpp1.ii");
  EXPECT_EQ(ptx_dissect::normalise_temp_path("/src/kernels.cu"), "kernels.cu");
  EXPECT_EQ(ptx_dissect::normalise_temp_path("kernels.o"), "kernels.o");
}

TEST(NvccPlan, CommandWordsKeepQuotedSpaces) {
  EXPECT_EQ(ptx_dissect::split_command(R"(gcc "-I/a b/include" -o "x y.o"  "")"),
            (Strings{"gcc", "-I/a b/include", "-o", "x y.o", ""}));
}

TEST(NvccPlan, TheRecordedCommandIsTheTitle) {
  EXPECT_EQ(ptx_dissect::recorded_command("$ nvcc -dryrun -c k.cu\n#$ _SPACE_=\n"),
            "nvcc -dryrun -c k.cu");
  EXPECT_EQ(ptx_dissect::recorded_command(fixture()), "");
}

TEST(NvccPlan, TextWithoutStepsIsAnError) {
  for (const char* text : {"", "nvcc fatal   : Unknown option '-bogus'\n", "#$ _HERE_=/usr\n"}) {
    try {
      ptx_dissect::parse_nvcc_dryrun(text);
      FAIL() << "no error for: " << text;
    } catch (const std::runtime_error& e) {
      EXPECT_STREQ(e.what(), "no nvcc -dryrun steps (lines that start with '#$ ')");
    }
  }
}
