#include "ptx_dissect/ptxas_report.hpp"

#include <gtest/gtest.h>

// Real ptxas 13.0 output for kernels/kernels.cu with -maxrregcount=16.
constexpr const char* kReport = R"(ptxas info    : 0 bytes gmem
ptxas warning : For profile sm_80 adjusting per thread register count of 16 to lower bound of 24
ptxas info    : Overriding maximum register limit 256 for 'spiller' with  24 of maxrregcount option
ptxas info    : Compiling entry function 'spiller' for 'sm_80'
ptxas info    : Function properties for spiller
    560 bytes stack frame, 984 bytes spill stores, 988 bytes spill loads
ptxas info    : Used 24 registers, used 0 barriers, 560 bytes cumulative stack size, 372 bytes cmem[0]
ptxas info    : Compiling entry function 'saxpy' for 'sm_80'
ptxas info    : Function properties for saxpy
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 10 registers, used 0 barriers, 380 bytes cmem[0]
)";

TEST(PtxasReport, ReadsRegistersSpillsAndTheClamp) {
  const auto r = ptx_dissect::parse_ptxas_report(kReport);
  ASSERT_EQ(r.functions.size(), 2U);
  const auto& s = r.functions.at("spiller");
  EXPECT_EQ(s.registers, 24);
  EXPECT_EQ(s.stack_frame_bytes, 560);
  EXPECT_EQ(s.spill_store_bytes, 984);
  EXPECT_EQ(s.spill_load_bytes, 988);
  EXPECT_EQ(r.functions.at("saxpy").registers, 10);
  ASSERT_TRUE(r.clamp.has_value());
  EXPECT_EQ(r.clamp->arch, "sm_80");
  EXPECT_EQ(r.clamp->requested, 16);
  EXPECT_EQ(r.clamp->applied, 24);
}

TEST(PtxasReport, RejectsTextThatIsNotAReport) {
  EXPECT_THROW(ptx_dissect::parse_ptxas_report("hello\nworld\n"), std::runtime_error);
}
