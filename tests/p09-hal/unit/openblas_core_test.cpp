// The fairness check of the OpenBLAS peer: the core OpenBLAS reports against
// the CPU's features (a pure function: no OpenBLAS and no CPUID involved).
#include <gtest/gtest.h>

#include "hal/openblas_core.hpp"

namespace hal = gpulab::hal;
using Kind = hal::OpenblasCoreVerdict::Kind;

namespace {

hal::CpuFeatures sse_only() { return {}; }
hal::CpuFeatures avx2() {
  hal::CpuFeatures f;
  f.avx = f.avx2 = f.fma = true;
  return f;
}
hal::CpuFeatures skylake_x() {
  hal::CpuFeatures f = avx2();
  f.avx512f = f.avx512bw = f.avx512dq = f.avx512vl = true;
  return f;
}
hal::CpuFeatures emerald_rapids() {  // this session's Xeon: AVX-512 with BF16
  hal::CpuFeatures f = skylake_x();
  f.avx512bf16 = true;
  return f;
}

}  // namespace

TEST(OpenblasCore, PrescottOnAnAvx512XeonIsMisdetected) {
  // Debian's OpenBLAS 0.3.21 on a Xeon model it does not know (family 6 model 207).
  const auto v = hal::judge_openblas_core("Prescott", emerald_rapids());
  EXPECT_EQ(v.kind, Kind::kMisdetected);
  EXPECT_EQ(v.core_isa, hal::VectorIsa::kSse);
  EXPECT_EQ(v.cpu_isa, hal::VectorIsa::kAvx512);
  EXPECT_EQ(v.coretype, "Cooperlake");
  EXPECT_EQ(v.describe(),
            "OpenBLAS core Prescott (SSE kernels) on a CPU with AVX-512: misdetected, "
            "OPENBLAS_CORETYPE=Cooperlake gives it AVX-512 kernels");
  // Without BF16 the AVX-512 core to ask for is SkylakeX.
  EXPECT_EQ(hal::judge_openblas_core("Prescott", skylake_x()).coretype, "SkylakeX");
}

TEST(OpenblasCore, AnAvx2CoreOnAnAvx512CpuIsMisdetectedToo) {
  const auto v = hal::judge_openblas_core("Haswell", skylake_x());
  EXPECT_EQ(v.kind, Kind::kMisdetected);
  EXPECT_EQ(v.coretype, "SkylakeX");
}

TEST(OpenblasCore, TheWidestCoreTheCpuRunsIsFair) {
  for (const char* core : {"SkylakeX", "Cooperlake", "SapphireRapids"}) {
    const auto v = hal::judge_openblas_core(core, emerald_rapids());
    EXPECT_EQ(v.kind, Kind::kFair) << core;
    EXPECT_EQ(v.coretype, "") << core;
  }
  // Zen 3 (the earlier sessions' EPYC: AVX2, no AVX-512): OpenBLAS's Zen and Haswell cores.
  EXPECT_EQ(hal::judge_openblas_core("Zen", avx2()).kind, Kind::kFair);
  EXPECT_EQ(hal::judge_openblas_core("Haswell", avx2()).kind, Kind::kFair);
  EXPECT_EQ(hal::judge_openblas_core("Haswell", avx2()).describe(),
            "OpenBLAS core Haswell (AVX2+FMA kernels) on a CPU with AVX2+FMA: fair");
  // An SSE-only CPU has nothing better than Prescott to ask for.
  EXPECT_EQ(hal::judge_openblas_core("Prescott", sse_only()).kind, Kind::kFair);
}

TEST(OpenblasCore, CoreNamesCompareWithoutCase) {
  EXPECT_EQ(hal::openblas_core_isa("skylakex"), hal::VectorIsa::kAvx512);
  EXPECT_EQ(hal::openblas_core_isa("PRESCOTT"), hal::VectorIsa::kSse);
  EXPECT_EQ(hal::openblas_core_isa("Sandybridge"), hal::VectorIsa::kAvx);
}

TEST(OpenblasCore, AnUnknownCoreIsSaidSoWithTheCoreTypeForThisCpu) {
  const auto v = hal::judge_openblas_core("Neoverse", avx2());
  EXPECT_EQ(v.kind, Kind::kUnknownCore);
  EXPECT_EQ(v.coretype, "Haswell");
  EXPECT_EQ(v.describe(),
            "OpenBLAS core Neoverse on a CPU with AVX2+FMA: a core name this check does not know, "
            "OPENBLAS_CORETYPE=Haswell gives it AVX2+FMA kernels");
  EXPECT_EQ(hal::judge_openblas_core("", avx2()).kind, Kind::kUnknownCore);
}

TEST(OpenblasCore, TheCoreIsReadFromTheBlasBackendsDeviceLine) {
  EXPECT_EQ(hal::openblas_core_in_device(
                "OpenBLAS 0.3.21 NO_LAPACKE DYNAMIC_ARCH NO_AFFINITY Prescott MAX_THREADS=64, core Prescott, 2 threads"),
            "Prescott");
  EXPECT_EQ(hal::openblas_core_in_device("OpenBLAS 0.3.21, core SkylakeX"), "SkylakeX");
  EXPECT_EQ(hal::openblas_core_in_device("host CPU, 2 threads"), "");
}

TEST(OpenblasCore, Avx512NeedsTheFourSubsetsOpenblasUses) {
  hal::CpuFeatures f = skylake_x();
  f.avx512vl = false;  // F without VL (a Knights Landing): OpenBLAS's SkylakeX kernels would fault
  EXPECT_EQ(hal::widest_isa(f), hal::VectorIsa::kAvx2);
  EXPECT_EQ(hal::judge_openblas_core("Haswell", f).kind, Kind::kFair);
  hal::CpuFeatures no_fma = avx2();
  no_fma.fma = false;
  EXPECT_EQ(hal::widest_isa(no_fma), hal::VectorIsa::kAvx);
}
