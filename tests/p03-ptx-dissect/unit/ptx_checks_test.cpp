// The PTX-level findings on nvcc's real output: the committed saxpy listing
// and, when the build made them, the full artifacts.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "ptx_dissect/annotate.hpp"
#include "ptx_dissect/findings.hpp"
#include "ptx_dissect/ptx_text.hpp"

namespace {

std::string read(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

const std::filesystem::path kLab = GPULAB_LAB_DIR;
const std::filesystem::path kArtifacts = PTX_DISSECT_ARTIFACTS;

}  // namespace

TEST(PtxText, FindsTheEntryBodyAndGuards) {
  const auto body = ptx_dissect::entry_body(read(kLab / "kernels/saxpy-nvcc13-sm80.ptx"), "saxpy");
  ASSERT_TRUE(body.has_value());
  EXPECT_EQ(body->front().text.rfind(".reg .pred", 0),
            0U);  // declarations come first, without an opcode
  EXPECT_EQ(body->front().opcode, "");
  EXPECT_EQ((*body)[4].opcode, "ld.param.f32");
  bool guarded_bra = false;
  for (const auto& l : *body) guarded_bra = guarded_bra || (l.opcode == "bra" && l.guard == "@%p1");
  EXPECT_TRUE(guarded_bra);
  EXPECT_FALSE(ptx_dissect::entry_body("garbage", "saxpy").has_value());
}

TEST(PtxChecks, SixIdiomsOnTheCommittedSaxpy) {
  const std::string ptx = read(kLab / "kernels/saxpy-nvcc13-sm80.ptx");
  const auto findings = ptx_dissect::check_ptx(ptx, "");
  for (std::size_t k = 0; k < 6; ++k)
    EXPECT_EQ(findings[k].status, ptx_dissect::Finding::Status::kPass)
        << findings[k].check << ": " << findings[k].found;
  // Without -fmad=false PTX (empty here) the contraction check must fail, not pass vacuously.
  EXPECT_EQ(findings[6].status, ptx_dissect::Finding::Status::kFail);
}

TEST(PtxChecks, AKernelWithoutTheIdiomsFails) {
  const std::string ptx = ".visible .entry saxpy(\n.param .u64 p\n)\n{\nret;\n}\n";
  for (const auto& f : ptx_dissect::check_ptx(ptx, ptx))
    EXPECT_EQ(f.status, ptx_dissect::Finding::Status::kFail) << f.check;
}

TEST(PtxChecks, BuildArtifactsPassEveryCheck) {
  if (!std::filesystem::exists(kArtifacts / "kernels.ptx"))
    GTEST_SKIP() << "no nvcc artifacts (nvcc absent at build time)";
  // Without cuobjdump the SASS rows are SKIP; every other row must pass.
  const std::string cuobjdump = PTX_DISSECT_CUOBJDUMP;
  for (const auto& f : ptx_dissect::run_all_checks(kArtifacts, cuobjdump)) {
    if (f.status == ptx_dissect::Finding::Status::kSkip) {
      EXPECT_TRUE(cuobjdump.empty()) << f.kernel << " " << f.check << ": " << f.found;
      EXPECT_NE(f.check.find("SASS"), std::string::npos) << f.check;
      continue;
    }
    EXPECT_EQ(f.status, ptx_dissect::Finding::Status::kPass)
        << f.kernel << " " << f.check << ": " << f.found;
  }
}

TEST(Annotate, ExplainsEveryRubricIdiom) {
  const std::string out = ptx_dissect::annotate(read(kLab / "kernels/saxpy-nvcc13-sm80.ptx"));
  for (const char* phrase :
       {"read a kernel argument from .param space", "generic pointer -> .global address",
        "blockIdx.x", "i = blockIdx.x * blockDim.x + threadIdx.x", "the tail test i >= n",
        "threads past the end skip the body", "byte offset = i * sizeof(float)",
        "nvcc contracted a mul and an add"})
    EXPECT_NE(out.find(phrase), std::string::npos) << phrase;
  EXPECT_EQ(ptx_dissect::explain_line(""), "");
  EXPECT_EQ(ptx_dissect::explain_line("$L__BB0_2:"), "label: a branch target");
}
