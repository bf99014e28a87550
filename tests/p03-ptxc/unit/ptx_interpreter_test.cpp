// The PTX parser and interpreter on their own: hand-written PTX, nvcc's PTX,
// and the faults a user must be told about.
#include "ptxc/ptx_interpreter.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <fstream>
#include <sstream>

#include "ptxc/differential.hpp"
#include "ptxc/ptx_module.hpp"
#include "test_util.hpp"

namespace {

std::string read(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string parse_error(std::string_view text) {
  try {
    (void)ptxc::ptx::parse_ptx(text);
  } catch (const ptxc::ptx::ParseError& e) {
    return e.what();
  }
  return "";
}

constexpr const char* kHeader = ".version 7.0\n.target sm_80\n.address_size 64\n";

std::string entry(std::string_view body,
                  std::string_view regs = ".reg .b32 %r<4>;\n.reg .f32 %f<4>;\n") {
  return std::string(kHeader) + ".visible .entry k(\n.param .u64 k_param_0\n)\n{\n" +
         std::string(regs) + ".reg .b64 %rd<4>;\n.reg .pred %p<2>;\n" + std::string(body) + "}\n";
}

}  // namespace

TEST(PtxParser, ReadsDirectivesParamsRegistersAndLabels) {
  const auto m = ptxc::ptx::parse_ptx(
      ptxc_test::compile_at("kernel k(s: f32, a: f32*) { a[i] = s * a[i]; }", 1).ptx);
  EXPECT_EQ(m.version, "7.0");
  EXPECT_EQ(m.target, "sm_75");
  ASSERT_EQ(m.entries.size(), 1U);
  EXPECT_EQ(m.entries[0].params.size(), 3U);
  EXPECT_EQ(m.entries[0].params[0].type, ptxc::ptx::DType::kF32);
  EXPECT_EQ(m.entries[0].params[2].type, ptxc::ptx::DType::kU32);  // the hidden n
}

TEST(PtxParser, RejectsMalformedAndUnsupportedPtxWithALineNumber) {
  EXPECT_EQ(parse_error(entry("add.f32 %f1, %f9, %f2;\n")),
            "line 12: register '%f9' is not declared");
  EXPECT_EQ(parse_error(entry("bra NOWHERE;\n")), "line 12: undefined label 'NOWHERE'");
  EXPECT_NE(parse_error(entry("tex.2d.v4.f32 %f1, %f2;\n")).find("unsupported instruction"),
            std::string::npos);
  EXPECT_NE(parse_error(entry("div.approx.f32 %f1, %f2, %f3;\n")).find("modifier .approx"),
            std::string::npos);
  EXPECT_NE(parse_error(entry("add.f32 %f1, %f2;\n")).find("takes 3 operands, 2 given"),
            std::string::npos);
  EXPECT_NE(parse_error(entry("ld.param.u64 %rd1, [nope];\n")).find("'nope' is not a parameter"),
            std::string::npos);
  EXPECT_NE(parse_error(".target sm_80\n").find("missing .version"), std::string::npos);
  EXPECT_NE(parse_error(std::string(kHeader) + ".visible .entry k(\n{").find("line"),
            std::string::npos);
  EXPECT_NE(parse_error("/* never closed").find("unterminated"), std::string::npos);
}

TEST(PtxInterpreter, PredicatedInstructionsAndBranches) {
  // r1 = tid; p1 = r1 < 2; @p1 store 1.0 else store 2.0 (via @!p1), one element per thread.
  const std::string text = entry(
      "ld.param.u64 %rd1, [k_param_0];\nmov.u32 %r1, %tid.x;\nsetp.lt.s32 %p1, %r1, 2;\n"
      "mul.wide.s32 %rd2, %r1, 4;\nadd.s64 %rd3, %rd1, %rd2;\n@%p1 bra ONE;\n"
      "st.global.f32 [%rd3], 0f40000000;\nret;\nONE:\n@!%p1 st.global.f32 [%rd3], 0f40400000;\n"
      "@%p1 st.global.f32 [%rd3], 0f3F800000;\nret;\n");
  const auto m = ptxc::ptx::parse_ptx(text);
  ptxc::GlobalMemory mem;
  const std::vector<float> zeros(4, 0.0F);
  const auto addr = mem.allocate("out", zeros);
  const auto stats = ptxc::launch(m.entries[0], {addr}, {1, 4}, mem);
  EXPECT_EQ(stats.threads, 4U);
  const auto out = mem.buffer(0);
  EXPECT_EQ(out[0], 1.0F);
  EXPECT_EQ(out[1], 1.0F);
  EXPECT_EQ(out[2], 2.0F);
  EXPECT_EQ(out[3], 2.0F);
}

TEST(PtxInterpreter, OutOfBoundsStoreNamesTheThreadAndAddress) {
  // One element, two threads, no guard: thread 1 writes 4 bytes past the end.
  const std::string text = entry(
      "ld.param.u64 %rd1, [k_param_0];\nmov.u32 %r1, %tid.x;\nmul.wide.s32 %rd2, %r1, 4;\n"
      "add.s64 %rd3, %rd1, %rd2;\nst.global.f32 [%rd3], 0f3F800000;\nret;\n");
  const auto m = ptxc::ptx::parse_ptx(text);
  ptxc::GlobalMemory mem;
  const std::vector<float> one(1, 0.0F);
  const auto addr = mem.allocate("out", one);
  try {
    ptxc::launch(m.entries[0], {addr}, {1, 2}, mem);
    FAIL() << "the out-of-bounds store was not reported";
  } catch (const ptxc::MemoryFault& f) {
    EXPECT_EQ(f.thread, 1);
    EXPECT_EQ(f.address, addr + 4);
    EXPECT_NE(std::string(f.what()).find("thread 1 (block 0, thread 1): out-of-bounds store"),
              std::string::npos)
        << f.what();
    EXPECT_NE(std::string(f.what()).find("0 bytes past the end of 'out' (4 bytes"),
              std::string::npos)
        << f.what();
  }
  EXPECT_EQ(mem.buffer(0)[0], 1.0F);  // thread 0's store landed
}

TEST(PtxInterpreter, AnEndlessLoopIsStoppedAndReported) {
  const auto m = ptxc::ptx::parse_ptx(entry("L:\nbra L;\n"));
  ptxc::GlobalMemory mem;
  EXPECT_THROW(ptxc::launch(m.entries[0], {0}, {1, 1}, mem), ptxc::ExecError);
}

TEST(PtxInterpreter, RoundsToF32AfterEveryOperationAndOnceForFma) {
  // x*x - 1 with x = 1 + 2^-12: the exact product 1 + 2^-11 + 2^-24 needs 25 bits.
  const float x = 1.0F + 0x1p-12F;
  const std::string text = entry(
      "ld.param.u64 %rd1, [k_param_0];\nld.global.f32 %f1, [%rd1];\nmul.rn.f32 %f2, %f1, %f1;\n"
      "sub.rn.f32 %f2, %f2, 0f3F800000;\nst.global.f32 [%rd1+4], %f2;\nfma.rn.f32 %f3, %f1, %f1, "
      "0fBF800000;\n"
      "st.global.f32 [%rd1+8], %f3;\nret;\n");
  const auto m = ptxc::ptx::parse_ptx(text);
  ptxc::GlobalMemory mem;
  const std::vector<float> init = {x, 0.0F, 0.0F};
  const auto addr = mem.allocate("buf", init);
  ptxc::launch(m.entries[0], {addr}, {1, 1}, mem);
  EXPECT_EQ(mem.buffer(0)[1], 0x1p-11F);             // the product rounded first: 2^-24 lost
  EXPECT_EQ(mem.buffer(0)[2], 0x1p-11F + 0x1p-24F);  // fma keeps it
}

#ifdef PTXC_NVCC_FIXTURE
// nvcc's own PTX (committed, and regenerated at build time when nvcc exists)
// runs in the interpreter and gives exactly ptxc's results on the same inputs.
class NvccPtx : public testing::TestWithParam<std::string> {};

void expect_identical_to_ptxc(const std::string& nvcc_ptx_path, const std::string& kernel) {
  const std::string text = read(nvcc_ptx_path);
  if (text.empty()) GTEST_SKIP() << nvcc_ptx_path << " is missing (nvcc not found at build time)";
  const auto nvcc = ptxc::ptx::parse_ptx(text);
  const auto source = read(std::string(GPULAB_LAB_DIR) + "/kernels/elementwise.ptxc");
  const auto mine = ptxc_test::compile_at(source, 1);
  const auto mine_mod = ptxc::ptx::parse_ptx(mine.ptx);
  for (const auto& k : mine.program.kernels) {
    if (k.name != kernel) continue;
    const auto* theirs = nvcc.find(k.name);
    ASSERT_NE(theirs, nullptr) << k.name;
    for (int n : {1, 127, 1000}) {
      const auto inputs = ptxc::random_inputs(k.params, n, 7);
      const auto a = ptxc::run_ptx(*mine_mod.find(k.name), k.params, inputs, n, 128);
      const auto b = ptxc::run_ptx(*theirs, k.params, inputs, n, 128);
      for (std::size_t p = 0; p < k.params.size(); ++p)
        for (std::size_t i = 0; i < a.buffers[p].size(); ++i)
          ASSERT_EQ(std::bit_cast<std::uint32_t>(a.buffers[p][i]),
                    std::bit_cast<std::uint32_t>(b.buffers[p][i]))
              << k.name << " " << k.params[p].name << "[" << i << "] n=" << n;
    }
  }
}

TEST_P(NvccPtx, CommittedFixtureMatchesPtxcBitForBit) {
  expect_identical_to_ptxc(std::string(GPULAB_LAB_DIR) + "/kernels/nvcc13-sm80-O3.ptx", GetParam());
}

TEST_P(NvccPtx, BuildTimeNvccOutputMatchesPtxcBitForBit) {
  expect_identical_to_ptxc(PTXC_NVCC_BUILD_PTX, GetParam());
}

INSTANTIATE_TEST_SUITE_P(Kernels, NvccPtx, testing::Values("saxpy", "scale2", "vadd"));
#endif
