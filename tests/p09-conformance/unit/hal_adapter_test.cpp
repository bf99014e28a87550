// The harness against the real HAL: its dtype conversions agree with the ones
// the ABI header gives every backend (so "expected" means the same bits), and
// the adapter drives real backend .so files through the core.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "conformance/hal_target.hpp"
#include "conformance/runner.hpp"
#include "gpulab/rng.hpp"
#include "built_backends.hpp"
#include "hal/hal.hpp"

namespace {

namespace hal = gpulab::hal;
using namespace conformance;

// Every F16 / BF16 / FP8 pattern decodes to the same value in both.
TEST(HalAgreement, DecodeEveryPattern) {
  for (std::uint32_t bits = 0; bits < (1u << 16); ++bits) {
    const auto h = static_cast<std::uint16_t>(bits);
    const double mine16 = decode(DType::kF16, bits), theirs16 = hal::half_to_float(h);
    if (std::isnan(mine16)) {
      EXPECT_TRUE(std::isnan(theirs16)) << bits;
    } else {
      ASSERT_EQ(mine16, theirs16) << "F16 " << bits;
    }
    const double mineb = decode(DType::kBF16, bits), theirsb = hal::bf16_to_float(h);
    if (std::isnan(mineb)) {
      EXPECT_TRUE(std::isnan(theirsb)) << bits;
    } else {
      ASSERT_EQ(mineb, theirsb) << "BF16 " << bits;
    }
  }
  for (std::uint32_t bits = 0; bits < 256; ++bits) {
    const double mine = decode(DType::kFP8, bits),
                 theirs = hal::fp8_e4m3_to_float(static_cast<std::uint8_t>(bits));
    if (std::isnan(mine)) {
      EXPECT_TRUE(std::isnan(theirs)) << bits;
    } else {
      ASSERT_EQ(mine, theirs) << "FP8 " << bits;
    }
  }
}

// Rounding binary32 into each narrow type: the same bits, ties and
// subnormals included (float inputs: one rounding either way).
TEST(HalAgreement, EncodeRandomAndTieFloats) {
  gpulab::Rng rng(5);
  for (int i = 0; i < 300000; ++i) {
    std::uint32_t u = static_cast<std::uint32_t>(rng.next_u64());
    if (i % 2 == 0) u &= 0xC7FFFFFFu;  // pull exponents into the narrow types' ranges
    if (i % 5 == 0) u = (u & 0xFFFF0000u) | 0x8000u;  // exact BF16 ties
    if (i % 7 == 0) u = (u & 0xFFFFE000u) | 0x1000u;  // exact F16 ties (in the normal range)
    float f;
    std::memcpy(&f, &u, sizeof f);
    if (std::isnan(f)) continue;
    const double d = f;
    ASSERT_EQ(encode(DType::kF16, d), hal::float_to_half(f)) << std::hexfloat << f;
    ASSERT_EQ(encode(DType::kBF16, d), hal::float_to_bf16(f)) << std::hexfloat << f;
    ASSERT_EQ(encode(DType::kFP8, d), hal::float_to_fp8_e4m3(f)) << std::hexfloat << f;
  }
}

using RealBackends = conformance_test::BuiltBackends;

TEST_F(RealBackends, InfoMirrorsTheDescriptor) {
  const BackendInfo cpu = info_of(get("cpu_ref"));
  EXPECT_EQ(cpu.name, "cpu_ref");
  EXPECT_EQ(cpu.abi, "2.2");
  EXPECT_TRUE(cpu.declares(Op::kPagedAttention, DType::kBF16));
  EXPECT_EQ(info_of(get("limited")).abi, "2.1");
  EXPECT_FALSE(info_of(get("limited")).declares(Op::kRmsNorm));
  EXPECT_TRUE(cpu.declares(Op::kMatmul, DType::kBF16));
  EXPECT_FALSE(cpu.declares(Op::kMatmul, DType::kFP8));
  const BackendInfo lim = info_of(get("limited"));
  EXPECT_FALSE(lim.declares(Op::kSoftmax));
  EXPECT_EQ(lim.max_dim, get("limited").max_dim());
  EXPECT_EQ(to_hal(DType::kFP8), hal::DType::kFP8);
  EXPECT_EQ(from_hal(hal::DType::kINT8), std::nullopt);
}

TEST_F(RealBackends, CpuRefPassesLiarFailsOnF16) {
  MatrixOptions o;
  o.ops = {Op::kBuffer, Op::kMatmul};
  o.dtypes = {DType::kF32, DType::kF16};
  const auto cases = prepare(build_matrix(o));
  HalTarget cpu(get("cpu_ref"));
  const BackendResult a = run_backend(cpu, cases);
  EXPECT_TRUE(a.conformant());
  for (const auto& cr : a.cases)
    EXPECT_EQ(cr.verdict, Verdict::kPass) << describe(cr.c) << ": " << cr.detail;
  HalTarget liar(get("liar"));
  const BackendResult b = run_backend(liar, cases);
  EXPECT_EQ(b.cell(Op::kMatmul, DType::kF32)->verdict, Verdict::kPass);
  EXPECT_EQ(b.cell(Op::kMatmul, DType::kF16)->verdict, Verdict::kFail);
}

TEST_F(RealBackends, TimesAMatmul) {
  HalTarget cpu(get("cpu_ref"));
  const auto s = cpu.time_matmul(32, 32, 32, 1);
  ASSERT_TRUE(s.has_value());
  EXPECT_GT(*s, 0.0);
  // limited has no F16 and a max_dim: timing beyond it is refused, not attempted.
  HalTarget lim(get("limited"));
  if (get("limited").max_dim() != 0) {
    EXPECT_FALSE(lim.time_matmul(get("limited").max_dim() + 1, 1, 1, 1).has_value());
  }
}

}  // namespace
