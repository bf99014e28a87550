// Capability routing: best perf hint among backends that declare the op and
// dtype and fit the shape; pinning; clean refusal; the quarantine gate.
#include <gtest/gtest.h>

#include "hal/walkthrough.hpp"
#include "hal_test_support.hpp"

namespace hal = gpulab::hal;
using hal::DType;
using hal::Op;
using hal_test::backend;

namespace {
// The four CPU backends that are always built, in a fixed order.
void load_cpu_four(hal::Registry& reg) {
  for (const char* name : {"cpu_ref", "fast", "limited", "liar"}) ASSERT_TRUE(reg.load(backend(name))) << name;
}
std::string routed(const hal::Registry& reg, hal::Request r) {
  auto b = reg.route(r);
  return b ? std::string(b.value()->name()) : "refused: " + b.error().message;
}
}  // namespace

TEST(Routing, PicksTheHighestPerfHintAmongCapableBackends) {
  hal::Registry reg;
  load_cpu_four(reg);
  // Trusting declarations: liar (perf 20) wins FP32 and FP16 — the war story.
  EXPECT_EQ(routed(reg, {Op::kMatmul, DType::kF32, 8, 8, 8}), "liar");
  EXPECT_EQ(routed(reg, {Op::kMatmul, DType::kF16, 8, 8, 8}), "liar");
  // Only cpu_ref declares BF16.
  EXPECT_EQ(routed(reg, {Op::kMatmul, DType::kBF16, 8, 8, 8}), "cpu_ref");
}

TEST(Routing, RefusesCleanlyInsteadOfDowngrading) {
  hal::Registry reg;
  load_cpu_four(reg);
  EXPECT_EQ(routed(reg, {Op::kMatmul, DType::kFP8, 8, 8, 8}), "refused: no loaded backend supports FP8 matmul");
  hal::Registry only_limited;
  ASSERT_TRUE(only_limited.load(backend("limited")));
  EXPECT_EQ(routed(only_limited, {Op::kMatmul, DType::kF16, 8, 8, 8}),
            "refused: no loaded backend supports FP16 matmul");
  EXPECT_EQ(routed(only_limited, {Op::kSoftmax, DType::kF32, 8, 8, 0}),
            "refused: no loaded backend supports FP32 softmax");
  EXPECT_EQ(routed(only_limited, {Op::kMatmul, DType::kF32, 2048, 16, 16}),
            "refused: no loaded backend supports FP32 matmul 2048x16x16 (limited: dimension 2048 > max_dim 1024)");
  hal::Registry empty;
  EXPECT_EQ(routed(empty, {Op::kMatmul, DType::kF32, 1, 1, 1}), "refused: no loaded backend supports FP32 matmul");
}

TEST(Routing, ShapeLimitsSteerWorkAway) {
  hal::Registry reg;
  ASSERT_TRUE(reg.load(backend("cpu_ref")));
  ASSERT_TRUE(reg.load(backend("limited")));
  EXPECT_EQ(routed(reg, {Op::kMatmul, DType::kF32, 1024, 1024, 1024}), "limited");  // perf 2 > 1, fits
  EXPECT_EQ(routed(reg, {Op::kMatmul, DType::kF32, 1025, 4, 4}), "cpu_ref");        // too big for limited
  EXPECT_EQ(routed(reg, {Op::kSoftmax, DType::kF32, 4, 4, 0}), "cpu_ref");          // limited has no softmax
}

TEST(Routing, TiesGoToTheBackendLoadedFirst) {
  hal::Registry reg;
  ASSERT_TRUE(reg.load(hal_test::test_backend("old_minor")));  // perf 1, F32
  ASSERT_TRUE(reg.load(backend("cpu_ref")));                   // perf 1, F32
  EXPECT_EQ(routed(reg, {Op::kMatmul, DType::kF32, 4, 4, 4}), "old_minor");
}

TEST(Routing, PinningReachesOneBackendOrSaysWhyNot) {
  hal::Registry reg;
  load_cpu_four(reg);
  auto ok = reg.pin("cpu_ref", {Op::kMatmul, DType::kF16, 4, 4, 4});
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok.value()->name(), "cpu_ref");
  auto no = reg.pin("limited", {Op::kMatmul, DType::kF16, 4, 4, 4});
  ASSERT_FALSE(no);
  EXPECT_EQ(no.error().message, "backend limited cannot run FP16 matmul 4x4x4: does not declare FP16");
  auto missing = reg.pin("tpu", {Op::kMatmul, DType::kF32, 4, 4, 4});
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().message, "no loaded backend is named tpu");
}

TEST(Routing, QuarantineTakesABackendOutOfRoutingButNotOutOfReach) {
  hal::Registry reg;
  load_cpu_four(reg);
  // Conformance first: liar fails the FP16 it declares.
  const auto check = hal::check_matmul(*reg.find("liar"), DType::kF16, 33, 17, 29, 5);
  ASSERT_TRUE(check.declared);
  EXPECT_FALSE(check.pass);
  reg.quarantine("liar", "declared F16, failed FP16 matmul");
  EXPECT_EQ(routed(reg, {Op::kMatmul, DType::kF16, 8, 8, 8}), "fast");
  EXPECT_EQ(routed(reg, {Op::kMatmul, DType::kF32, 8, 8, 8}), "fast");
  EXPECT_EQ(reg.quarantine_reason("liar"), "declared F16, failed FP16 matmul");
  EXPECT_TRUE(reg.pin("liar", {Op::kMatmul, DType::kF16, 8, 8, 8}));
  // With only liar able to, the refusal names the quarantine.
  hal::Registry solo;
  ASSERT_TRUE(solo.load(backend("liar")));
  solo.quarantine("liar", "failed FP16");
  EXPECT_EQ(routed(solo, {Op::kMatmul, DType::kF16, 2, 2, 2}),
            "refused: no loaded backend supports FP16 matmul 2x2x2 (liar: quarantined: failed FP16)");
  EXPECT_EQ(solo.dtypes_for(Op::kMatmul), 0u);
}

TEST(Routing, DtypeUnionIsWhatTheLoadedBackendsOffer) {
  hal::Registry reg;
  load_cpu_four(reg);
  EXPECT_EQ(hal::dtype_mask_string(reg.dtypes_for(Op::kMatmul)), "F32|F16|BF16");
  EXPECT_EQ(hal::dtype_mask_string(reg.dtypes_for(Op::kSoftmax)), "F32|F16|BF16");
}

TEST(Routing, WalkthroughGatesTheLiarAndRoutesLikeTheCurriculum) {
  hal::Registry reg;
  load_cpu_four(reg);
  const auto w = hal::run_walkthrough(reg, {});
  EXPECT_TRUE(w.fp32_all_pass());
  ASSERT_EQ(w.backends.size(), 4u);
  EXPECT_TRUE(w.backends[3].quarantined);  // liar
  EXPECT_FALSE(w.backends[0].quarantined);
  EXPECT_TRUE(w.layer_ops_all_pass());
  ASSERT_EQ(w.backends[0].layer_ops.size(), 4u);  // cpu_ref: every ABI 2.2 op checked
  for (const auto& c : w.backends[0].layer_ops) EXPECT_TRUE(c.result.declared && c.result.pass);
  for (const auto& c : w.backends[2].layer_ops) EXPECT_FALSE(c.result.declared);  // limited: ABI 2.1
  ASSERT_EQ(w.routes.size(), 6u);
  EXPECT_EQ(w.routes[5].target, "fast");
  EXPECT_EQ(w.routes[5].reason, "highest perf among F32 paged_attention-capable");
  EXPECT_EQ(w.routes[0].target, "fast");
  EXPECT_EQ(w.routes[0].reason, "highest perf among F32-capable; liar quarantined");
  EXPECT_EQ(w.routes[1].target, "fast");
  EXPECT_EQ(w.routes[2].target, "cpu_ref");
  EXPECT_EQ(w.routes[2].reason, "only BF16-capable backend");
  EXPECT_TRUE(w.routes[3].refused);
  EXPECT_EQ(w.routes[3].reason, "no loaded backend supports FP8 matmul");
}
