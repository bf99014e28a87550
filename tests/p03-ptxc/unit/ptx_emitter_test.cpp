// Golden PTX (our own deterministic register numbering) and the idioms the
// curriculum asks for, checked on the emitted text.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "test_util.hpp"

namespace {

constexpr const char* kScale2 =
    "kernel scale2(a: f32*, b: f32*, c: f32*) {\n    c[i] = a[i] * 2.0 + b[i];\n}\n";

std::string golden(const std::string& name) {
  std::ifstream in(std::string(GPULAB_LAB_DIR) + "/../../tests/p03-ptxc/golden/" + name);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

TEST(PtxEmitter, F32HexIsTheIeeeBitPattern) {
  EXPECT_EQ(ptxc::f32_hex(2.0F), "0f40000000");
  EXPECT_EQ(ptxc::f32_hex(1.0F), "0f3F800000");
  EXPECT_EQ(ptxc::f32_hex(8.0F), "0f41000000");
  EXPECT_EQ(ptxc::f32_hex(0.0F), "0f00000000");
  EXPECT_EQ(ptxc::f32_hex(-0.0F), "0f80000000");
}

TEST(PtxEmitter, GoldenScale2AtO1) {
  EXPECT_EQ(ptxc_test::compile_at(kScale2, 1).ptx, golden("scale2.O1.ptx"));
}

TEST(PtxEmitter, GoldenScale2AtO0) {
  EXPECT_EQ(ptxc_test::compile_at(kScale2, 0).ptx, golden("scale2.O0.ptx"));
}

TEST(PtxEmitter, GoldenSquareSumAtO1) {
  EXPECT_EQ(ptxc_test::compile_at("kernel sqsum(a: f32*, b: f32*, c: f32*) {\n    c[i] = (a[i] + "
                                  "b[i]) * (a[i] + b[i]);\n}\n",
                                  1)
                .ptx,
            golden("sqsum.O1.ptx"));
}

TEST(PtxEmitter, HasEveryCurriculumIdiom) {
  const std::string ptx = ptxc_test::compile_at(kScale2, 0).ptx;
  for (const char* idiom : {".version 7.0",
                            ".target sm_75",
                            ".address_size 64",
                            ".visible .entry scale2(",
                            ".param .u64 scale2_param_0",
                            ".param .u32 scale2_param_3",
                            ".reg .pred",
                            "ld.param.u64",
                            "cvta.to.global.u64",
                            "mov.u32 \t%r1, %ctaid.x",
                            "mov.u32 \t%r2, %ntid.x",
                            "mov.u32 \t%r3, %tid.x",
                            "mad.lo.s32 \t%r4, %r1, %r2, %r3",
                            "setp.ge.s32 \t%p1, %r4, %r5",
                            "@%p1 bra \tDONE",
                            "mul.wide.s32",
                            "ld.global.f32",
                            "st.global.f32",
                            "mov.f32 \t%f2, 0f40000000",
                            "DONE:\n\tret;"})
    EXPECT_NE(ptx.find(idiom), std::string::npos) << idiom << "\n" << ptx;
}

TEST(PtxEmitter, O1ComputesTheByteOffsetOnceAndContractsToFma) {
  const std::string ptx = ptxc_test::compile_at(kScale2, 1).ptx;
  EXPECT_EQ(ptxc_test::count_of(ptx, "mul.wide.s32"), 1U);
  EXPECT_EQ(ptxc_test::count_of(ptx, "fma.rn.f32"), 1U);
  EXPECT_EQ(ptxc_test::count_of(ptx, "add.rn.f32"), 0U);
  // -O0 recomputes i*4 for each of the three accesses: the pitfall CSE fixes.
  EXPECT_EQ(ptxc_test::count_of(ptxc_test::compile_at(kScale2, 0).ptx, "mul.wide.s32"), 3U);
}

TEST(PtxEmitter, NonContractedArithmeticCarriesExplicitRounding) {
  const auto ptx =
      ptxc_test::compile_at("kernel k(a: f32*, b: f32*) { b[i] = a[i] * b[i] - a[i] / b[i]; }", 1)
          .ptx;
  EXPECT_NE(ptx.find("mul.rn.f32"), std::string::npos);
  EXPECT_NE(ptx.find("sub.rn.f32"), std::string::npos);
  EXPECT_NE(ptx.find("div.rn.f32"), std::string::npos);
  EXPECT_EQ(ptx.find("mul.f32"), std::string::npos);
}

TEST(PtxEmitter, IntrinsicsLowerToTheirPtx) {
  const auto ptx = ptxc_test::compile_at(
                       "kernel k(a: f32*, b: f32*) { b[i] = relu(min(a[i], b[i])) + max(abs(a[i]), "
                       "sqrt(b[i])); }",
                       1)
                       .ptx;
  for (const char* op : {"min.f32", "max.f32", "abs.f32", "sqrt.rn.f32", "0f00000000"})
    EXPECT_NE(ptx.find(op), std::string::npos) << op;
}

TEST(PtxEmitter, TargetSetsTheVersionAndUnknownTargetsAreRejected) {
  auto o = ptxc::CompileOptions::at_level(1);
  o.emit.target = "sm_90";
  const auto c = ptxc::compile(kScale2, "t.k", o);
  EXPECT_NE(c.ptx.find(".version 7.8\n.target sm_90\n"), std::string::npos);
  o.emit.target = "sm_42";
  EXPECT_THROW(ptxc::compile(kScale2, "t.k", o), std::invalid_argument);
}

TEST(PtxEmitter, NoGuardDropsTheTailCheck) {
  auto o = ptxc::CompileOptions::at_level(1);
  o.emit.guard = false;
  const auto ptx = ptxc::compile(kScale2, "t.k", o).ptx;
  EXPECT_EQ(ptx.find("setp.ge.s32"), std::string::npos);
  EXPECT_EQ(ptx.find("bra"), std::string::npos);
}
