// The harness's verdicts on in-process fake backends: honest ones pass in any
// summation order, every way of being wrong is caught, undeclared is n/a and
// never called.
#include "conformance/runner.hpp"

#include <gtest/gtest.h>

#include <algorithm>

#include "conformance/matrix.hpp"
#include "fake_targets.hpp"

namespace {

using namespace conformance;
using fake::FakeTarget;
using fake::Flaw;

// The pre-2.2 ops: the in-process fakes implement buffer, matmul and softmax
// (layer_ops_test.cpp tests the decoder-layer cases on real backends).
MatrixOptions fake_ops() {
  MatrixOptions o;
  o.ops = {Op::kBuffer, Op::kMatmul, Op::kSoftmax};
  return o;
}

const std::vector<PreparedCase>& small_matrix() {
  static const std::vector<PreparedCase> cases = prepare(build_matrix(fake_ops()));
  return cases;
}

TEST(Matrix, CoversOddAndDegenerateShapes) {
  const auto mm = shapes_for(Op::kMatmul, false);
  auto has = [&](std::uint64_t m, std::uint64_t n, std::uint64_t k) {
    return std::find(mm.begin(), mm.end(), Shape{m, n, k, ""}) != mm.end();
  };
  EXPECT_TRUE(has(1, 1, 1));
  EXPECT_TRUE(has(0, 5, 3));    // empty output
  EXPECT_TRUE(has(4, 3, 0));    // empty reduction: zeros
  EXPECT_TRUE(has(7, 13, 5));   // primes
  EXPECT_TRUE(has(257, 3, 2));  // tall-skinny
  EXPECT_TRUE(has(2, 3, 257));  // long reduction
  EXPECT_GT(shapes_for(Op::kMatmul, true).size(), mm.size());
  const auto cases = build_matrix(MatrixOptions{});
  // 4 buffer + 8 matmul x 4 dtypes + 6 softmax x 4 dtypes, then per dtype 5
  // rmsnorm, 4 rope, 4 silu_mul and 6 paged-attention shapes
  EXPECT_EQ(cases.size(), 4u + 8u * 4u + 6u * 4u + (5u + 4u + 4u + 6u) * 4u);
  EXPECT_EQ(describe(cases[4]), "matmul F32 1x1x1");
  EXPECT_EQ(capability_id("liar", Op::kMatmul, DType::kF16), "liar/F16/matmul");
  EXPECT_EQ(capability_id("fast", Op::kBuffer, DType::kF32), "fast/buffer");
}

TEST(Matrix, FilteringKeepsEachCasesNumbers) {
  MatrixOptions only_f16;
  only_f16.ops = {Op::kMatmul};
  only_f16.dtypes = {DType::kF16};
  const auto few = build_matrix(only_f16);
  const auto all = build_matrix(MatrixOptions{});
  ASSERT_EQ(few.size(), 8u);
  for (const Case& c : few) {
    auto it = std::find_if(all.begin(), all.end(), [&](const Case& a) {
      return a.op == c.op && a.dtype == c.dtype && a.shape == c.shape;
    });
    ASSERT_NE(it, all.end());
    EXPECT_EQ(it->seed, c.seed) << describe(c);
  }
}

TEST(Matrix, NoMatmulResultOverflowsFP8) {
  MatrixOptions o;
  o.large = true;
  o.dtypes = {DType::kFP8};
  o.ops = {Op::kMatmul};
  for (const Case& c : build_matrix(o))
    for (double v : make_case_data(c).exact) ASSERT_LT(std::fabs(v), 448.0) << describe(c);
}

TEST(Runner, HonestBackendsPassInAnySummationOrder) {
  for (bool reverse : {false, true}) {
    FakeTarget honest("honest", {DType::kF32, DType::kF16, DType::kBF16, DType::kFP8}, Flaw::kNone,
                      DType::kF16, reverse);
    const BackendResult r = run_backend(honest, small_matrix());
    EXPECT_TRUE(r.conformant());
    for (const auto& cr : r.cases)
      EXPECT_EQ(cr.verdict, Verdict::kPass) << describe(cr.c) << ": " << cr.detail;
    for (const auto& cell : r.cells) {
      EXPECT_EQ(cell.verdict, Verdict::kPass);
      EXPECT_EQ(cell.passed, cell.total);
    }
  }
}

TEST(Runner, LiarDeclaringF16IsCaughtOnF16Only) {
  FakeTarget liar("liar", {DType::kF32, DType::kF16}, Flaw::kF16AsBF16, DType::kF16);
  const BackendResult r = run_backend(liar, small_matrix());
  EXPECT_FALSE(r.conformant());
  EXPECT_EQ(r.cell(Op::kMatmul, DType::kF16)->verdict, Verdict::kFail);
  EXPECT_EQ(r.cell(Op::kSoftmax, DType::kF16)->verdict, Verdict::kFail);
  EXPECT_EQ(r.cell(Op::kMatmul, DType::kF32)->verdict, Verdict::kPass);
  EXPECT_EQ(r.cell(Op::kMatmul, DType::kBF16)->verdict, Verdict::kNotDeclared);
  EXPECT_EQ(r.cell(Op::kMatmul, DType::kFP8)->verdict, Verdict::kNotDeclared);
  EXPECT_EQ(r.cell(Op::kBuffer, DType::kF32)->verdict, Verdict::kPass);
  EXPECT_EQ(r.failed_capabilities(), 2);
  const auto failed = std::find_if(r.cases.begin(), r.cases.end(), [](const CaseResult& c) {
    return c.verdict == Verdict::kFail && c.c.op == Op::kMatmul;
  });
  ASSERT_NE(failed, r.cases.end());
  const std::string line = failure_line("liar", *failed);
  EXPECT_EQ(line.rfind("FAIL liar/F16/matmul ", 0), 0u) << line;
  EXPECT_NE(line.find("outside tolerance"), std::string::npos) << line;
}

TEST(Runner, UndeclaredCapabilitiesAreNotCalled) {
  FakeTarget limited("limited", {DType::kF32});
  limited.mutable_info().ops = {Op::kBuffer, Op::kMatmul};  // no softmax
  const BackendResult r = run_backend(limited, small_matrix());
  EXPECT_TRUE(r.conformant());
  // 4 buffer cases + 8 F32 matmul shapes: nothing else reached the backend.
  EXPECT_EQ(limited.calls, 12);
  EXPECT_EQ(r.cell(Op::kSoftmax, DType::kF32)->verdict, Verdict::kNotDeclared);
  EXPECT_EQ(r.cell(Op::kMatmul, DType::kF16)->verdict, Verdict::kNotDeclared);
}

TEST(Runner, AccumulatingInF16BreaksTheContractOnLongReductions) {
  FakeTarget sloppy("sloppy", {DType::kF16}, Flaw::kAccumulateInDType, DType::kF16);
  const BackendResult r = run_backend(sloppy, small_matrix());
  EXPECT_EQ(r.cell(Op::kMatmul, DType::kF16)->verdict, Verdict::kFail);
  for (const auto& cr : r.cases) {
    if (cr.c.op == Op::kMatmul && cr.c.dtype == DType::kF16 && cr.c.shape.k <= 1) {
      EXPECT_EQ(cr.verdict, Verdict::kPass) << describe(cr.c);
    }
  }
  const auto long_k = std::find_if(r.cases.begin(), r.cases.end(), [](const CaseResult& c) {
    return c.c.op == Op::kMatmul && c.c.dtype == DType::kF16 && c.c.shape.k == 257;
  });
  ASSERT_NE(long_k, r.cases.end());
  EXPECT_EQ(long_k->verdict, Verdict::kFail);
}

TEST(Runner, SoftmaxWithoutMaxSubtractionFailsOnShiftedRows) {
  FakeTarget naive("naive", {DType::kF32}, Flaw::kNoMaxSubtraction, DType::kF32);
  const BackendResult r = run_backend(naive, small_matrix());
  EXPECT_EQ(r.cell(Op::kSoftmax, DType::kF32)->verdict, Verdict::kFail);
  EXPECT_EQ(r.cell(Op::kMatmul, DType::kF32)->verdict, Verdict::kPass);
  const auto one = std::find_if(r.cases.begin(), r.cases.end(), [](const CaseResult& c) {
    return c.c.op == Op::kSoftmax && c.c.shape.m == 1;  // a single row, shifted by -100: still fine
  });
  ASSERT_NE(one, r.cases.end());
  EXPECT_EQ(one->verdict, Verdict::kPass);
}

TEST(Runner, ErrorsWrongSizesAndBadCopiesAreFailures) {
  FakeTarget refuser("refuser", {DType::kF32, DType::kBF16}, Flaw::kRefuse, DType::kBF16);
  const BackendResult a = run_backend(refuser, small_matrix());
  EXPECT_EQ(a.cell(Op::kMatmul, DType::kBF16)->verdict, Verdict::kFail);
  const auto refused = std::find_if(a.cases.begin(), a.cases.end(), [](const CaseResult& c) {
    return c.verdict == Verdict::kFail;
  });
  ASSERT_NE(refused, a.cases.end());
  EXPECT_NE(refused->detail.find("declared but the call failed: unsupported: refused"),
            std::string::npos);

  FakeTarget short_out("short", {DType::kF32}, Flaw::kShortOutput, DType::kF32);
  const BackendResult b = run_backend(short_out, small_matrix());
  EXPECT_EQ(b.cell(Op::kMatmul, DType::kF32)->verdict, Verdict::kFail);

  FakeTarget bad_copy("badcopy", {DType::kF32}, Flaw::kBufferOffByOne);
  const BackendResult c = run_backend(bad_copy, small_matrix());
  EXPECT_EQ(c.cell(Op::kBuffer, DType::kF32)->verdict, Verdict::kFail);
  EXPECT_EQ(c.cell(Op::kMatmul, DType::kF32)->verdict, Verdict::kPass);
}

TEST(Runner, MaxDimTurnsBigShapesIntoNotApplicable) {
  FakeTarget small("small", {DType::kF32});
  small.mutable_info().max_dim = 64;
  const BackendResult r = run_backend(small, small_matrix());
  EXPECT_TRUE(r.conformant());
  for (const auto& cr : r.cases) {
    if (largest_dim(cr.c) > 64 && cr.c.dtype == DType::kF32) {
      EXPECT_EQ(cr.verdict, Verdict::kNotDeclared);
      EXPECT_NE(cr.detail.find("max_dim 64"), std::string::npos);
    }
  }
}

TEST(Runner, UnavailableBackendIsSkippedNotPassed) {
  FakeTarget gone("cuda", {DType::kF32, DType::kF16});
  gone.mutable_info().unavailable = "no device: no CUDA-capable device is detected";
  const BackendResult r = run_backend(gone, small_matrix());
  EXPECT_EQ(gone.calls, 0);
  EXPECT_TRUE(r.conformant());  // nothing failed...
  for (const auto& cell : r.cells)
    EXPECT_EQ(cell.verdict, Verdict::kSkipped);  // ...and nothing passed
}

}  // namespace
