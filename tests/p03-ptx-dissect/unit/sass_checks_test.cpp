// The SASS reader and the SASS rows of the findings sheet, on fixed listings in
// cuobjdump's format (excerpts of its real output for kernels.cu on sm_80), so
// they run everywhere; and, where the build found cuobjdump, on the real cubins.
#include <gtest/gtest.h>

#include <filesystem>
#include <gpulab/errors.hpp>
#include <string>

#include "ptx_dissect/findings.hpp"
#include "ptx_dissect/sass_text.hpp"
#include "ptx_dissect/tool_run.hpp"

namespace {

using Status = ptx_dissect::Finding::Status;

// cuobjdump --dump-sass kernels.cubin, nvcc 13.0, sm_80 (NOP padding and most
// encoding lines left out; the reader ignores both).
constexpr const char* kKernels = R"sass(
	code for sm_80
	.target	sm_80

		Function : unrolled
	.headerflags	@"EF_CUDA_SM80 EF_CUDA_VIRTUAL_SM(EF_CUDA_SM80)"
        /*0000*/                   IMAD.MOV.U32 R1, RZ, RZ, c[0x0][0x28] ;            /* 0x00000a00ff017624 */
        /*0100*/                   LDG.E R2, [R2.64] ;                                /* 0x0000000402027981 */
        /*0110*/                   LDG.E R3, [R4.64] ;                                /* 0x0000000404037981 */
        /*0120*/                   LDG.E R4, [R6.64] ;                                /* 0x0000000406047981 */
        /*0130*/                   LDG.E R5, [R8.64] ;                                /* 0x0000000408057981 */
        /*0140*/                   LDG.E R6, [R10.64] ;                               /* 0x000000040a067981 */
        /*0150*/                   LDG.E R7, [R12.64] ;                               /* 0x000000040c077981 */
        /*0160*/                   LDG.E R8, [R14.64] ;                               /* 0x000000040e087981 */
        /*0170*/                   LDG.E R9, [R16.64] ;                               /* 0x0000000410097981 */
        /*0180*/                   LDG.E R10, [R18.64] ;                              /* 0x00000004120a7981 */
        /*0190*/                   EXIT ;                                             /* 0x000000000000794d */
		Function : rolled
	.headerflags	@"EF_CUDA_SM80 EF_CUDA_VIRTUAL_SM(EF_CUDA_SM80)"
        /*0000*/                   MOV R1, c[0x0][0x28] ;                             /* 0x00000a0000017a02 */
        /*0040*/                   LDG.E R2, [R2.64] ;                                /* 0x0000000402027981 */
        /*0050*/              @P0 BRA 0x40 ;                                          /* 0xffffffe000000947 */
        /*0060*/                   EXIT ;                                             /* 0x000000000000794d */
		Function : spiller
	.headerflags	@"EF_CUDA_SM80 EF_CUDA_VIRTUAL_SM(EF_CUDA_SM80)"
        /*0000*/                   IMAD.MOV.U32 R1, RZ, RZ, c[0x0][0x28] ;            /* 0x00000a00ff017624 */
        /*0010*/                   FFMA R4, R4, R5, R6 ;                              /* 0x0000000504047223 */
        /*0020*/                   EXIT ;                                             /* 0x000000000000794d */
		Function : guarded
	.headerflags	@"EF_CUDA_SM80 EF_CUDA_VIRTUAL_SM(EF_CUDA_SM80)"
        /*0000*/                   MOV R1, c[0x0][0x28] ;                             /* 0x00000a0000017a02 */
                                                                                      /* 0x000fe40000000f00 */
        /*0040*/                   ISETP.GE.AND P0, PT, R4, c[0x0][0x170], PT ;       /* 0x00005c0004007a0c */
                                                                                      /* 0x000fda0003f06270 */
        /*0050*/               @P0 EXIT ;                                             /* 0x000000000000094d */
                                                                                      /* 0x000fea0003800000 */
        /*0090*/                   LDG.E R7, [R2.64] ;                                /* 0x0000000402077981 */
                                                                                      /* 0x000ea2000c1e1900 */
        /*00b0*/                   FSETP.GEU.AND P0, PT, R7, RZ, PT ;                 /* 0x000000ff0700720b */
                                                                                      /* 0x004fda0003f0e000 */
        /*00c0*/              @!P0 FMUL R7, R7, -0.5 ;                                /* 0xbf00000007078820 */
                                                                                      /* 0x000fca0000400000 */
        /*00d0*/                   STG.E [R4.64], R7 ;                                /* 0x0000000704007986 */
                                                                                      /* 0x000fe2000c101904 */
        /*00e0*/                   EXIT ;                                             /* 0x000000000000794d */
                                                                                      /* 0x000fea0003800000 */
        /*00f0*/                   BRA 0xf0;                                          /* 0xfffffff000007947 */
                                                                                      /* 0x000fc0000383ffff */
		Function : saxpy
	.headerflags	@"EF_CUDA_SM80 EF_CUDA_VIRTUAL_SM(EF_CUDA_SM80)"
        /*0050*/               @P0 EXIT ;                                             /* 0x000000000000094d */
        /*00a0*/                   LDG.E R2, [R2.64] ;                                /* 0x0000000402027981 */
        /*00b0*/                   LDG.E R7, [R4.64] ;                                /* 0x0000000404077981 */
        /*00c0*/                   FFMA R7, R2, c[0x0][0x160], R7 ;                   /* 0x0000580002077a23 */
        /*00d0*/                   STG.E [R4.64], R7 ;                                /* 0x0000000704007986 */
        /*00e0*/                   EXIT ;                                             /* 0x000000000000794d */
		..........
)sass";

// cuobjdump --dump-sass kernels-maxrreg16.cubin (the spiller, abridged).
constexpr const char* kMaxrreg16 = R"sass(
	code for sm_80
		Function : spiller
        /*0590*/                   STL [R1+0x18], R20 ;                                /* 0x0000181401007387 */
        /*0740*/                   STL [R1+0x24], R20 ;                                /* 0x0000241401007387 */
        /*1a00*/                   LDL R9, [R1+0x18] ;                                 /* 0x0000180001097983 */
        /*1a10*/                   LDL R11, [R1+0x24] ;                                /* 0x00002400010b7983 */
        /*1a20*/                   LDL R13, [R1+0x28] ;                                /* 0x00002800010d7983 */
)sass";

// cuobjdump --dump-sass wmma.cubin (abridged).
constexpr const char* kWmma = R"sass(
	code for sm_80
		Function : wmma16
        /*0190*/                   HMMA.16816.F32 R20, R4.reuse, R16, R20 ;                    /* 0x000000100414723c */
        /*01a0*/                   HMMA.16816.F32 R8, R4, R18, R8 ;                            /* 0x000000120408723c */
)sass";

const ptx_dissect::Finding& row(const std::vector<ptx_dissect::Finding>& f,
                                const std::string& kernel) {
  for (const auto& x : f)
    if (x.kernel == kernel) return x;
  throw std::runtime_error("no row for " + kernel);
}

}  // namespace

TEST(SassText, ReadsFunctionsGuardsOpcodesAndOperands) {
  const auto fns = ptx_dissect::parse_sass_dump(kKernels);
  ASSERT_EQ(fns.size(), 5U);
  EXPECT_EQ(fns[0].name, "unrolled");
  EXPECT_EQ(fns[0].arch, "sm_80");
  const auto* guarded = ptx_dissect::find_function(fns, "guarded");
  ASSERT_NE(guarded, nullptr);
  // The encoding's second half ("/* 0x000fe4... */") is not an instruction.
  ASSERT_EQ(guarded->code.size(), 9U);
  const auto& fmul = guarded->code[5];
  EXPECT_EQ(fmul.address, 0xc0U);
  EXPECT_EQ(fmul.guard, "@!P0");
  EXPECT_EQ(fmul.opcode, "FMUL");
  EXPECT_EQ(fmul.operands, "R7, R7, -0.5");
  EXPECT_EQ(guarded->code[1].opcode, "ISETP.GE.AND");
  EXPECT_EQ(guarded->code[1].base(), "ISETP");
  EXPECT_EQ(ptx_dissect::count_base(*ptx_dissect::find_function(fns, "unrolled"), "LDG"), 9U);
  EXPECT_EQ(ptx_dissect::find_function(fns, "nosuch"), nullptr);
}

TEST(SassText, OnlyABranchToItselfIsPadding) {
  const auto fns = ptx_dissect::parse_sass_dump(kKernels);
  const auto& guarded = *ptx_dissect::find_function(fns, "guarded");
  EXPECT_TRUE(ptx_dissect::is_padding_branch(guarded.code.back()));  // BRA 0xf0 at 0xf0
  const auto& rolled = *ptx_dissect::find_function(fns, "rolled");
  EXPECT_FALSE(ptx_dissect::is_padding_branch(rolled.code[2]));  // @P0 BRA 0x40: the loop
}

TEST(SassText, AnInstructionOutsideAFunctionIsAnError) {
  try {
    ptx_dissect::parse_sass_dump("\n        /*0000*/  MOV R1, c[0x0][0x28] ;\n");
    FAIL() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "line 2: SASS instruction before any 'Function :'");
  }
  EXPECT_TRUE(
      ptx_dissect::parse_sass_dump("cuobjdump info    : File 'x' does not contain device code")
          .empty());
}

TEST(SassChecks, TheFixedListingsPassEveryRow) {
  const auto f = ptx_dissect::check_sass_dumps({kKernels, kMaxrreg16, kWmma});
  ASSERT_EQ(f.size(), 5U);
  for (const auto& x : f) EXPECT_EQ(x.status, Status::kPass) << x.kernel << ": " << x.found;
  EXPECT_EQ(row(f, "saxpy").found, "1 FFMA, 0 FMUL/FADD");
  EXPECT_EQ(row(f, "guarded").found, "1 predicated (@!P0 FMUL), 0 SEL/FSEL, 0 BRA");
  EXPECT_EQ(row(f, "unrolled").found, "9 LDG vs 1 in the rolled loop");
  EXPECT_EQ(row(f, "spiller").found, "2 STL, 3 LDL capped; 0 uncapped");
  EXPECT_EQ(row(f, "wmma16").found, "2 HMMA.16816.F32");
}

TEST(SassChecks, ABranchOverTheIfBodyFails) {
  // The body kept as a branch: only the tail guard's @P0 EXIT is predicated.
  const std::string branchy = R"sass(
		Function : guarded
        /*0050*/               @P0 EXIT ;
        /*00b0*/                   FSETP.GEU.AND P0, PT, R7, RZ, PT ;
        /*00c0*/               @P0 BRA 0xe0 ;
        /*00d0*/                   FMUL R7, R7, -0.5 ;
        /*00e0*/                   STG.E [R4.64], R7 ;
        /*00f0*/                   EXIT ;
)sass";
  const auto f = ptx_dissect::check_sass_dumps({branchy, kMaxrreg16, kWmma});
  EXPECT_EQ(row(f, "guarded").status, Status::kFail);
  EXPECT_EQ(row(f, "guarded").found, "0 predicated, 0 SEL/FSEL, 1 BRA");
}

TEST(SassChecks, MissingFunctionsFailInsteadOfPassingVacuously) {
  const auto f = ptx_dissect::check_sass_dumps({"", "", ""});
  for (const auto& x : f) EXPECT_EQ(x.status, Status::kFail) << x.kernel << ": " << x.found;
  // A spiller that spills without the cap is not the finding either.
  const auto spills_anyway = ptx_dissect::check_sass_dumps({kMaxrreg16, kMaxrreg16, kWmma});
  EXPECT_EQ(row(spills_anyway, "spiller").status, Status::kFail);
  EXPECT_EQ(row(spills_anyway, "spiller").found, "2 STL, 3 LDL capped; 5 uncapped");
}

TEST(SassChecks, AnUnreadableListingFailsTheRowsThatReadIt) {
  const std::string stray = "        /*0000*/  MOV R1, c[0x0][0x28] ;\n";
  const auto f = ptx_dissect::check_sass_dumps({kKernels, kMaxrreg16, stray});
  EXPECT_EQ(row(f, "saxpy").status, Status::kPass);
  EXPECT_EQ(row(f, "spiller").status, Status::kPass);
  EXPECT_EQ(row(f, "wmma16").status, Status::kFail);
  EXPECT_EQ(row(f, "wmma16").found,
            "unreadable SASS listing: line 1: SASS instruction before any 'Function :'");
}

TEST(SassChecks, NoCuobjdumpIsASkipThatSaysHowToGetIt) {
  for (const std::string tool : {"", "/nonexistent/cuobjdump"}) {
    const auto f = ptx_dissect::check_sass(testing::TempDir(), tool);
    ASSERT_EQ(f.size(), 5U);
    for (const auto& x : f) {
      EXPECT_EQ(x.status, Status::kSkip) << tool;
      EXPECT_EQ(x.found, tool.empty() ? "no cuobjdump (tools/lab build installs it)"
                                      : "no cuobjdump at /nonexistent/cuobjdump");
    }
  }
}

TEST(SassChecks, ACuobjdumpThatFailsFailsTheRowsWithItsMessage) {
  // /bin/false stands in for a cuobjdump that cannot read the cubins.
  const auto f = ptx_dissect::check_sass(testing::TempDir(), "/bin/false");
  for (const auto& x : f) {
    EXPECT_EQ(x.status, Status::kFail);
    EXPECT_EQ(x.found, "cuobjdump exit 1 on kernels.cubin: ");
  }
}

TEST(SassChecks, RealCubinsPassWithTheBuildsCuobjdump) {
  const std::string tool = PTX_DISSECT_CUOBJDUMP;
  const std::filesystem::path artifacts = PTX_DISSECT_ARTIFACTS;
  if (tool.empty()) GTEST_SKIP() << "no cuobjdump at configure time (tools/lab build installs it)";
  if (!std::filesystem::exists(artifacts / "kernels.cubin"))
    GTEST_SKIP() << "no nvcc artifacts (nvcc absent at build time)";
  for (const auto& x : ptx_dissect::check_sass(artifacts, tool))
    EXPECT_EQ(x.status, Status::kPass) << x.kernel << " " << x.check << ": " << x.found;
}

TEST(ToolRun, KeepsOutputAndExitCodeWithoutAShell) {
  const auto r = ptx_dissect::run_tool({"/bin/sh", "-c", "echo out; echo err >&2; exit 3"});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.output.find("out\n"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("err\n"), std::string::npos) << r.output;
  // An argument with shell syntax reaches the program as one argument.
  const auto echo = ptx_dissect::run_tool({"/bin/echo", "a; rm -rf x $(y)"});
  EXPECT_EQ(echo.output, "a; rm -rf x $(y)\n");
  EXPECT_THROW(ptx_dissect::run_tool({"/nonexistent/tool"}), gpulab::RunError);
}
