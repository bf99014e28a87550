// The ABI 2.2 cases of the matrix (rmsnorm, rope, silu_mul, paged attention)
// in both directions: real backends pass them, and a backend with one of the
// classic decoder-layer bugs fails them. The bugs are made by a Target that
// wraps the real cpu_ref and bends the call on its way there, so each one is
// exactly one mistake away from a correct implementation.
#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <string>

#include "conformance/hal_target.hpp"
#include "conformance/reference.hpp"
#include "conformance/runner.hpp"
#include "built_backends.hpp"
#include "hal/hal.hpp"

namespace {

namespace hal = gpulab::hal;
using namespace conformance;

using Inputs = std::vector<std::vector<std::uint8_t>>;

// cpu_ref, with `bend` applied to every case's encoded inputs first.
class BentTarget : public Target {
 public:
  BentTarget(const hal::Backend& be, std::function<void(const Case&, Inputs&)> bend)
      : real_(be), bend_(std::move(bend)) {}
  [[nodiscard]] const BackendInfo& info() const override { return real_.info(); }
  RunOutcome run(const Case& c, const Inputs& inputs) override {
    Inputs bent = inputs;
    bend_(c, bent);
    return real_.run(c, bent);
  }
  std::optional<double> time_matmul(std::uint64_t, std::uint64_t, std::uint64_t, int) override {
    return std::nullopt;
  }

 private:
  HalTarget real_;
  std::function<void(const Case&, Inputs&)> bend_;
};

std::int32_t get_i32(const std::vector<std::uint8_t>& b, std::size_t i) {
  std::int32_t v;
  std::memcpy(&v, b.data() + i * 4, 4);
  return v;
}
void set_i32(std::vector<std::uint8_t>& b, std::size_t i, std::int32_t v) {
  std::memcpy(b.data() + i * 4, &v, 4);
}

class LayerCases : public conformance_test::BuiltBackends {
 protected:
  static std::vector<PreparedCase> cases(Op op, std::vector<DType> dtypes = {DType::kF32}) {
    MatrixOptions o;
    o.ops = {op};
    o.dtypes = std::move(dtypes);
    return prepare(build_matrix(o));
  }
  static Verdict verdict(Target& t, Op op, DType d = DType::kF32) {
    const BackendResult r = run_backend(t, cases(op, {d}));
    return r.cell(op, d)->verdict;
  }
};

TEST_F(LayerCases, EveryHostBackendPassesEveryDeclaredDtype) {
  for (const char* name : {"cpu_ref", "fast", "opencl"}) {
    if (reg_->find(name) == nullptr) continue;  // opencl needs an ICD
    HalTarget t(get(name));
    for (Op op : {Op::kRmsNorm, Op::kRope, Op::kSiluMul, Op::kPagedAttention}) {
      const BackendResult r = run_backend(t, cases(op, {DType::kF32, DType::kF16, DType::kBF16}));
      for (const auto& cr : r.cases)
        EXPECT_EQ(cr.verdict,
                  t.info().declares(op, cr.c.dtype) ? Verdict::kPass : Verdict::kNotDeclared)
            << name << " " << describe(cr.c) << ": " << cr.detail;
      EXPECT_EQ(r.cell(op, DType::kF32)->verdict, Verdict::kPass) << name << " " << name_of(op);
    }
  }
}

TEST_F(LayerCases, AnAbi21BackendIsNotAskedAndReadsNa) {
  HalTarget lim(get("limited"));
  for (Op op : {Op::kRmsNorm, Op::kRope, Op::kSiluMul, Op::kPagedAttention})
    EXPECT_EQ(verdict(lim, op), Verdict::kNotDeclared) << name_of(op);
}

TEST_F(LayerCases, AttentionThatIgnoresTheBlockTableFails) {
  // Reads sequence s's block j at physical block s * max_blocks + j: what a
  // kernel written for contiguous K/V does.
  BentTarget t(get("cpu_ref"), [](const Case& c, Inputs& in) {
    if (c.op != Op::kPagedAttention) return;
    const std::uint64_t w = attention_shape(c, 0).max_blocks_per_seq;
    for (std::size_t i = 0; i < in[3].size() / 4; ++i)
      if (get_i32(in[3], i) >= 0) set_i32(in[3], i, static_cast<std::int32_t>(i / w * w + i % w));
  });
  EXPECT_EQ(verdict(t, Op::kPagedAttention), Verdict::kFail);
}

TEST_F(LayerCases, AttentionWithoutTheCausalMaskFails) {
  // Every query row of a sequence sees up to the sequence's last token.
  BentTarget t(get("cpu_ref"), [](const Case& c, Inputs& in) {
    if (c.op != Op::kPagedAttention) return;
    const std::size_t rows = in[4].size() / 4;
    for (std::size_t r = 0; r < rows; ++r)
      for (std::size_t o = 0; o < rows; ++o)
        if (get_i32(in[4], o) == get_i32(in[4], r) && get_i32(in[5], o) > get_i32(in[5], r))
          set_i32(in[5], r, get_i32(in[5], o));
  });
  EXPECT_EQ(verdict(t, Op::kPagedAttention), Verdict::kFail);
}

TEST_F(LayerCases, AttentionThatMapsQueryHeadsToTheWrongKvHeadFails) {
  // Swapping the two KV heads of every slot = query head h reading KV head
  // (h mod kv_heads) instead of h / group, on the grouped cases.
  BentTarget t(get("cpu_ref"), [](const Case& c, Inputs& in) {
    if (c.op != Op::kPagedAttention || c.shape.kv_heads != 2) return;
    const std::size_t hd = c.shape.k * 4;  // F32 bytes per head vector
    for (auto* cache : {&in[1], &in[2]})
      for (std::size_t s = 0; s + 2 * hd <= cache->size(); s += 2 * hd)
        std::swap_ranges(cache->begin() + static_cast<std::ptrdiff_t>(s),
                         cache->begin() + static_cast<std::ptrdiff_t>(s + hd),
                         cache->begin() + static_cast<std::ptrdiff_t>(s + hd));
  });
  EXPECT_EQ(verdict(t, Op::kPagedAttention), Verdict::kFail);
}

TEST_F(LayerCases, RopeRotatingTheWrongWayFails) {
  BentTarget t(get("cpu_ref"), [](const Case& c, Inputs& in) {
    if (c.op != Op::kRope) return;
    for (std::size_t i = 0; i < in[3].size() / 4; ++i) {
      float v;
      std::memcpy(&v, in[3].data() + i * 4, 4);
      v = -v;
      std::memcpy(in[3].data() + i * 4, &v, 4);
    }
  });
  EXPECT_EQ(verdict(t, Op::kRope), Verdict::kFail);
}

TEST_F(LayerCases, RopeAtTheWrongPositionFails) {
  BentTarget t(get("cpu_ref"), [](const Case& c, Inputs& in) {
    if (c.op != Op::kRope) return;
    for (std::size_t i = 0; i < in[1].size() / 4; ++i)
      set_i32(in[1], i, (get_i32(in[1], i) + 1) % static_cast<std::int32_t>(kRopeMaxPosition));
  });
  EXPECT_EQ(verdict(t, Op::kRope), Verdict::kFail);
}

TEST_F(LayerCases, RmsNormWithoutItsWeightFails) {
  BentTarget t(get("cpu_ref"), [](const Case& c, Inputs& in) {
    if (c.op != Op::kRmsNorm) return;
    const float one = 1.0f;
    for (std::size_t i = 0; i < in[1].size() / 4; ++i) std::memcpy(in[1].data() + i * 4, &one, 4);
  });
  EXPECT_EQ(verdict(t, Op::kRmsNorm), Verdict::kFail);
}

TEST_F(LayerCases, SiluMulWithGateAndUpSwappedFails) {
  BentTarget t(get("cpu_ref"), [](const Case& c, Inputs& in) {
    if (c.op != Op::kSiluMul) return;
    const std::size_t row = c.shape.n * 2 * 4, half = c.shape.n * 4;
    for (std::size_t r = 0; r + row <= in[0].size(); r += row)
      std::swap_ranges(in[0].begin() + static_cast<std::ptrdiff_t>(r),
                       in[0].begin() + static_cast<std::ptrdiff_t>(r + half),
                       in[0].begin() + static_cast<std::ptrdiff_t>(r + half));
  });
  EXPECT_EQ(verdict(t, Op::kSiluMul), Verdict::kFail);
}

TEST(LayerMatrix, CasesAreLabelledAndSeededByEveryField) {
  MatrixOptions o;
  o.ops = {Op::kPagedAttention};
  o.dtypes = {DType::kF32};
  const auto m = build_matrix(o);
  ASSERT_FALSE(m.empty());
  EXPECT_EQ(describe(m[1]), "paged_attention F32 5x19x16 h4/2 b4 q1");
  EXPECT_EQ(largest_dim(m[1]), 19u);
  o.ops = {Op::kRope};
  EXPECT_EQ(describe(build_matrix(o)[2]), "rope F32 7x3hx10");
  // The pre-2.2 cases keep their seeds: the same matrix, the same numbers.
  o.ops = {Op::kMatmul};
  const auto mm = build_matrix(o);
  o.ops = {Op::kMatmul, Op::kPagedAttention};
  const auto both = build_matrix(o);
  EXPECT_EQ(mm[3].seed, both[3].seed);
}

}  // namespace
