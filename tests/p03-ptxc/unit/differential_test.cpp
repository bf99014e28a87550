// The differential test as a user meets it: the suite passes, the guard
// matters, and a wrong compiler would be caught.
#include "ptxc/differential.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "ptxc/suite.hpp"
#include "test_util.hpp"

namespace {

ptxc::DiffResult diff(const ptxc::Compilation& c, std::size_t k, ptxc::DiffOptions opts = {}) {
  const auto m = ptxc::ptx::parse_ptx(c.ptx);
  return ptxc::run_differential(c.program.kernels.at(k), *m.find(c.program.kernels.at(k).name),
                                opts);
}

}  // namespace

TEST(Differential, EveryBuiltinKernelAgreesWithTheReferenceAtBothLevels) {
  const auto suite = ptxc::run_suite({}, {});
  ASSERT_EQ(suite.rows.size(), 10U);
  for (const auto& row : suite.rows) {
    EXPECT_TRUE(row.pass()) << row.kernel << ": " << ptxc::describe_failure(row.o0) << " / "
                            << ptxc::describe_failure(row.o1);
    EXPECT_LE(row.instructions_o1, row.instructions_o0) << row.kernel;
  }
}

TEST(Differential, CountBitDifferencesSeesTheLastBit) {
  const std::vector<std::vector<float>> a = {{1.0F, 2.0F}};
  const std::vector<std::vector<float>> b = {{1.0F, std::nextafter(2.0F, 3.0F)}};
  EXPECT_EQ(ptxc::count_bit_differences(a, a), 0U);
  EXPECT_EQ(ptxc::count_bit_differences(a, b), 1U);
}

TEST(Differential, TheGuardCatchesATailThatIsNotABlockMultiple) {
  const auto c =
      ptxc_test::compile_at("kernel vadd(a: f32*, b: f32*, c: f32*) { c[i] = a[i] + b[i]; }", 1);
  for (int n : {1, 127, 129, 1000}) {
    const auto r = diff(c, 0, {.n = n, .block = 128, .seed = 3, .tol = {}});
    EXPECT_TRUE(r.pass) << n << ": " << r.fault;
    EXPECT_EQ(r.comparison.compared, 3U * static_cast<std::size_t>(n));
    EXPECT_EQ(r.stats.threads % 128, 0U);  // whole blocks launched, the tail idles
  }
}

TEST(Differential, WithoutTheGuardTheTailThreadFaultsAndTheTestFails) {
  auto o = ptxc::CompileOptions::at_level(1);
  o.emit.guard = false;
  const auto c =
      ptxc::compile("kernel vadd(a: f32*, b: f32*, c: f32*) { c[i] = a[i] + b[i]; }", "t.k", o);
  const auto r = diff(c, 0, {.n = 1000, .block = 128, .seed = 1, .tol = {}});
  EXPECT_FALSE(r.pass);
  EXPECT_NE(r.fault.find("thread 1000 (block 7, thread 104): out-of-bounds load"),
            std::string::npos)
      << r.fault;
  // With n a block multiple nothing is out of bounds: why the lab insists on n=1000.
  EXPECT_TRUE(diff(c, 0, {.n = 1024, .block = 128, .seed = 1, .tol = {}}).pass);
}

TEST(Differential, AWrongResultIsReportedElementByElement) {
  // Compile a different kernel under the same name: the comparison must notice.
  const auto right = ptxc_test::compile_at("kernel k(a: f32*, b: f32*) { b[i] = a[i] + 1; }", 1);
  const auto wrong =
      ptxc_test::compile_at("kernel k(a: f32*, b: f32*) { b[i] = a[i] + 1.001; }", 1);
  const auto m = ptxc::ptx::parse_ptx(wrong.ptx);
  const auto r = ptxc::run_differential(right.program.kernels[0], m.entries[0], {});
  EXPECT_FALSE(r.pass);
  EXPECT_EQ(r.comparison.mismatches, 1000U);
  EXPECT_EQ(r.comparison.first_mismatch.rfind("b[0]: got ", 0), 0U) << r.comparison.first_mismatch;
}

TEST(Differential, InputBuffersMustNotChange) {
  // A kernel that writes a (but the reference says b) is caught through a.
  const auto ref = ptxc_test::compile_at("kernel k(a: f32*, b: f32*) { b[i] = a[i]; }", 1);
  const auto bad =
      ptxc_test::compile_at("kernel k(a: f32*, b: f32*) { b[i] = a[i]; a[i] = 0; }", 1);
  const auto r =
      ptxc::run_differential(ref.program.kernels[0], ptxc::ptx::parse_ptx(bad.ptx).entries[0], {});
  EXPECT_FALSE(r.pass);
  EXPECT_EQ(r.comparison.first_mismatch.rfind("a[0]", 0), 0U);
}

TEST(Differential, ToleranceHasARelativePartAndAnAbsoluteFloor) {
  const std::vector<ptxc::Param> params = {{"x", ptxc::Type::kF32Ptr, {}}};
  const std::vector<std::vector<float>> want = {{1000.0F, 0.0F, 1.0F}};
  const std::vector<std::vector<float>> near = {{1000.005F, 5e-6F, 1.0F}};
  const std::vector<std::vector<float>> far = {{1000.05F, 5e-6F, 1.0F}};
  EXPECT_EQ(ptxc::compare_buffers(params, want, near, {}).mismatches, 0U);
  EXPECT_EQ(ptxc::compare_buffers(params, want, far, {}).mismatches, 1U);
}
