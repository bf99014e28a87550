// Every backend against the host reference: odd and degenerate shapes, every
// declared dtype, softmax, the OpenCL backend on PoCL against cpu_ref, the
// CUDA backend's no-device path, and the wrapper's own argument checks.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "hal_test_support.hpp"

namespace hal = gpulab::hal;
using hal::DType;
using hal_test::backend;

namespace {
struct Shape {
  std::uint64_t m, n, k;
};
// Odd, degenerate, and ones that cross fast's blocking (kc 256, NR 16); gemm_edges_test.cpp has more.
constexpr Shape kShapes[] = {{1, 1, 1}, {7, 5, 3}, {61, 47, 35}, {130, 67, 300}, {0, 5, 4}, {5, 0, 4}, {5, 4, 0}, {1, 33, 1}};

class HonestCpuBackend : public ::testing::TestWithParam<const char*> {};

TEST_P(HonestCpuBackend, MatchesTheReferenceOnEveryDeclaredDtypeAndShape) {
  hal::Registry reg;
  ASSERT_TRUE(reg.load(backend(GetParam())));
  const hal::Backend& b = *reg.backends().front();
  for (DType d : hal::kAllDTypes) {
    for (const Shape& s : kShapes) {
      if (b.max_dim() && std::max({s.m, s.n, s.k}) > b.max_dim()) continue;
      const auto r = hal::check_matmul(b, d, s.m, s.n, s.k, 11);
      EXPECT_EQ(r.declared, b.declares(d));
      if (!r.declared) continue;
      EXPECT_TRUE(r.pass) << b.name() << " " << hal::flag_name(d) << " " << s.m << "x" << s.n << "x" << s.k
                          << ": " << hal::describe(r.status) << " ratio " << r.worst_ratio;
    }
    const auto sm = hal::check_softmax(b, d, 9, 31, 4);
    EXPECT_EQ(sm.declared, b.declares(hal::Op::kSoftmax) && b.declares(d));
    if (sm.declared) {
      EXPECT_TRUE(sm.pass) << b.name() << " softmax " << hal::flag_name(d) << " " << sm.worst_ratio;
    }
  }
}
INSTANTIATE_TEST_SUITE_P(P09, HonestCpuBackend, ::testing::Values("cpu_ref", "fast", "limited"));

TEST(FastBackend, LargeThreadedMatmulMatchesTheReference) {
  hal::Registry reg;
  ASSERT_TRUE(reg.load(backend("fast")));
  EXPECT_TRUE(hal::check_matmul(*reg.find("fast"), DType::kF32, 197, 211, 523, 2).pass);
  EXPECT_TRUE(hal::check_matmul(*reg.find("fast"), DType::kF16, 97, 250, 129, 2).pass);
}

TEST(LiarBackend, IsHonestInF32AndWrongInTheF16ItDeclares) {
  hal::Registry reg;
  ASSERT_TRUE(reg.load(backend("liar")));
  const hal::Backend& b = *reg.find("liar");
  EXPECT_TRUE(b.declares(DType::kF16));
  EXPECT_TRUE(hal::check_matmul(b, DType::kF32, 61, 47, 35, 1).pass);
  const auto f16 = hal::check_matmul(b, DType::kF16, 61, 47, 35, 1);
  EXPECT_TRUE(f16.status.ok());  // it returns OK: the lie is in the numbers
  EXPECT_FALSE(f16.pass);
  EXPECT_GT(f16.worst_ratio, 10.0);
  EXPECT_FALSE(hal::check_softmax(b, DType::kF16, 8, 16, 1).pass);
}

TEST(BlasBackend, MatchesTheReference) {
  if (!hal_test::built("blas")) GTEST_SKIP() << "blas backend not built (no OpenBLAS at configure time)";
  hal::Registry reg;
  ASSERT_TRUE(reg.load(backend("blas")));
  for (const Shape& s : kShapes)
    EXPECT_TRUE(hal::check_matmul(*reg.find("blas"), DType::kF32, s.m, s.n, s.k, 3).pass) << s.m << "x" << s.n << "x" << s.k;
  EXPECT_FALSE(hal::check_matmul(*reg.find("blas"), DType::kF16, 4, 4, 4, 3).declared);
}

TEST(OpenclBackend, RunsRealKernelsAndAgreesWithCpuRef) {
  if (!hal_test::built("opencl")) GTEST_SKIP() << "opencl backend not built (no OpenCL headers/ICD loader)";
  hal::Registry reg;
  ASSERT_TRUE(reg.load(backend("cpu_ref")));
  // A skip only when there is no OpenCL device; any other load failure is a failure.
  if (!reg.load(backend("opencl"))) {
    const hal::Rejection& why = reg.rejected().back();
    if (why.reason == hal::RejectReason::kNoDevice) GTEST_SKIP() << "no OpenCL device: " << why.message;
    FAIL() << "opencl backend did not load (" << hal::reject_reason_name(why.reason) << "): " << why.message;
  }
  const hal::Backend& cl = *reg.find("opencl");
  const hal::Backend& ref = *reg.find("cpu_ref");
  EXPECT_NE(cl.device().find("OpenCL: "), std::string::npos) << cl.device();
  for (const Shape& s : kShapes) {
    const auto r = hal::check_matmul(cl, DType::kF32, s.m, s.n, s.k, 7);
    EXPECT_TRUE(r.pass) << s.m << "x" << s.n << "x" << s.k << ": " << hal::describe(r.status);
  }
  // The same inputs through both backends: element by element within F32 tolerance.
  const std::uint64_t m = 37, n = 29, k = 45;
  std::vector<float> a(m * k), bm(k * n);
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>((i * 37) % 17) / 8.0f - 1.0f;
  for (std::size_t i = 0; i < bm.size(); ++i) bm[i] = static_cast<float>((i * 11) % 13) / 6.0f - 1.0f;
  const auto ea = hal::encode(DType::kF32, a), eb = hal::encode(DType::kF32, bm);
  std::vector<std::uint8_t> c_cl(m * n * 4), c_ref(m * n * 4);
  ASSERT_TRUE(cl.matmul_host(DType::kF32, m, n, k, ea.data(), eb.data(), c_cl.data()).ok());
  ASSERT_TRUE(ref.matmul_host(DType::kF32, m, n, k, ea.data(), eb.data(), c_ref.data()).ok());
  const auto got = hal::decode(DType::kF32, c_cl.data(), m * n), want = hal::decode(DType::kF32, c_ref.data(), m * n);
  for (std::size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-4f * (1.0f + std::fabs(want[i]))) << i;
  EXPECT_TRUE(hal::check_softmax(cl, DType::kF32, 17, 40, 2).pass);
  EXPECT_TRUE(hal::check_softmax(cl, DType::kF32, 0, 40, 2).pass);
}

TEST(CudaBackend, LoadsOrReportsNoDeviceCleanly) {
  if (!hal_test::built("cuda")) GTEST_SKIP() << "cuda backend not built (no CUDA toolkit with cuBLAS)";
  hal::Registry reg;
  if (reg.load(backend("cuda"))) {
    EXPECT_NE(reg.find("cuda")->device().find("CUDA device 0"), std::string::npos);
    return;
  }
  const hal::Rejection& r = reg.rejected().front();
  EXPECT_EQ(r.reason, hal::RejectReason::kNoDevice) << r.message;
  EXPECT_EQ(r.name, "cuda");
  EXPECT_EQ(r.message.rfind("no CUDA device (cudaGetDeviceCount: ", 0), 0u) << r.message;
}

TEST(CudaBackend, MatmulMatchesTheReferenceOnTheGpu) {
  if (!hal_test::built("cuda")) GTEST_SKIP() << "cuda backend not built (no CUDA toolkit with cuBLAS)";
  hal::Registry reg;
  if (!reg.load(backend("cuda"))) {
    const hal::Rejection& why = reg.rejected().front();
    if (why.reason == hal::RejectReason::kNoDevice) GTEST_SKIP() << "no GPU here: " << why.message;
    FAIL() << "cuda backend did not load (" << hal::reject_reason_name(why.reason) << "): " << why.message;
  }
  const hal::Backend& b = *reg.find("cuda");
  for (DType d : {DType::kF32, DType::kF16, DType::kBF16})
    for (const Shape& s : kShapes) {
      const auto r = hal::check_matmul(b, d, s.m, s.n, s.k, 9);
      EXPECT_TRUE(r.pass) << hal::flag_name(d) << " " << s.m << "x" << s.n << "x" << s.k << ": "
                          << hal::describe(r.status) << " ratio " << r.worst_ratio;
    }
  EXPECT_FALSE(hal::check_matmul(b, DType::kFP8, 4, 4, 4, 9).declared);
}

TEST(BackendWrapper, RefusesUndeclaredWorkWithoutCallingTheBackend) {
  hal::Registry reg;
  ASSERT_TRUE(reg.load(backend("limited")));
  const hal::Backend& b = *reg.find("limited");
  std::vector<std::uint8_t> buf(64);
  const auto s = b.matmul_host(DType::kF16, 2, 2, 2, buf.data(), buf.data(), buf.data());
  EXPECT_EQ(s.code, GPULAB_HAL_ERR_UNSUPPORTED);
  EXPECT_EQ(hal::describe(s), "unsupported: backend limited does not declare F16");
  const auto sm = b.softmax_host(DType::kF32, 2, 2, buf.data(), buf.data());
  EXPECT_EQ(hal::describe(sm), "unsupported: backend limited does not declare softmax");
}

TEST(BackendWrapper, ChecksBuffersAndCopies) {
  hal::Registry reg;
  ASSERT_TRUE(reg.load(backend("cpu_ref")));
  ASSERT_TRUE(reg.load(backend("fast")));
  const hal::Backend& ref = *reg.find("cpu_ref");
  const hal::Backend& fast = *reg.find("fast");
  auto a = ref.allocate(16);
  auto other = fast.allocate(16);
  ASSERT_TRUE(a && other);
  std::uint8_t host[32] = {};
  EXPECT_EQ(hal::describe(ref.upload(a.value(), host, 32)),
            "invalid argument: copy of 32 bytes at offset 0 overruns a 16-byte buffer");
  EXPECT_EQ(ref.upload(a.value(), host, 8, 12).code, GPULAB_HAL_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(ref.upload(a.value(), host, 8, 8).ok());
  EXPECT_EQ(hal::describe(ref.download(host, other.value(), 4)), "invalid argument: buffer belongs to another backend");
  EXPECT_EQ(ref.matmul(DType::kF32, 2, 2, 2, a.value(), a.value(), other.value()).code, GPULAB_HAL_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(hal::describe(ref.matmul(DType::kF32, 4, 4, 4, a.value(), a.value(), a.value())),
            "invalid argument: matmul 4x4x4 needs buffers of 64, 64 and 64 bytes");
  // Round trip through a buffer.
  const std::uint8_t pattern[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
  std::uint8_t back[16] = {};
  ASSERT_TRUE(ref.upload(a.value(), pattern, 16).ok());
  ASSERT_TRUE(ref.download(back, a.value(), 16).ok());
  EXPECT_EQ(std::memcmp(pattern, back, 16), 0);
  EXPECT_TRUE(a.value().release().ok());
  EXPECT_EQ(a.value().handle(), nullptr);
}
}  // namespace
