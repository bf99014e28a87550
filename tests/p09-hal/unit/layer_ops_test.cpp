// The ABI 2.2 decoder-layer ops on every backend that implements them here
// (cpu_ref, fast, opencl on PoCL; cuda where a GPU is present), against the
// binary64 reference under the per-dtype tolerance, on the shapes that break
// kernels: one element, odd widths, zero rows, grouped and single KV heads,
// one-slot blocks, chunked prefill next to decode. Then the refusals.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "hal_test_support.hpp"

namespace hal = gpulab::hal;
using namespace hal_test;

namespace {

class LayerOps : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (!built(GetParam()))
      GTEST_SKIP() << "backend " << GetParam() << " is not built in this configuration";
    reg_.load(backend(GetParam()));
    be_ = reg_.find(GetParam());
    if (be_ == nullptr) {
      const auto& r = reg_.rejected().front();
      if (r.reason == hal::RejectReason::kNoDevice) GTEST_SKIP() << GetParam() << ": " << r.message;
      FAIL() << GetParam() << " rejected: " << r.message;
    }
  }
  hal::Registry reg_;
  const hal::Backend* be_ = nullptr;
};

void expect_pass(const hal::CheckResult& r, const std::string& what) {
  EXPECT_TRUE(r.declared) << what;
  EXPECT_TRUE(r.status.ok()) << what << ": " << hal::describe(r.status);
  EXPECT_TRUE(r.pass) << what << ": worst error " << r.worst_ratio << " x tolerance";
}

std::vector<hal::DType> declared(const hal::Backend& b) {
  std::vector<hal::DType> out;
  for (hal::DType d : {hal::DType::kF32, hal::DType::kF16, hal::DType::kBF16})
    if (b.declares(d)) out.push_back(d);
  return out;
}

TEST_P(LayerOps, DeclaresEveryOpOfAbi22) {
  EXPECT_EQ(be_->abi_minor(), 2u);
  for (hal::Op o : hal::kLayerOps)
    EXPECT_TRUE(be_->declares(o) && be_->has_function(o)) << hal::op_name(o);
}

TEST_P(LayerOps, RmsNormMatchesTheReference) {
  for (hal::DType d : declared(*be_))
    for (auto [rows, cols] : {std::pair<int, int>{1, 1}, {3, 7}, {5, 64}, {2, 1031}, {0, 16}})
      expect_pass(hal::check_rmsnorm(*be_, d, rows, cols, 11),
                  fmt::format("{} rmsnorm {}x{}", hal::flag_name(d), rows, cols));
}

TEST_P(LayerOps, RopeMatchesTheReferenceAndLeavesTheRestOfTheRow) {
  // check_rope's rows carry a v part and a padding element: the reference
  // holds them unchanged, so a kernel that strays past the heads fails.
  for (hal::DType d : declared(*be_))
    for (auto [rows, heads, hd] :
         {std::tuple<int, int, int>{1, 1, 2}, {3, 4, 16}, {7, 3, 10}, {0, 2, 8}, {4, 0, 8}})
      expect_pass(
          hal::check_rope(*be_, d, rows, heads, hd, 5),
          fmt::format("{} rope {} rows x {} heads x {}", hal::flag_name(d), rows, heads, hd));
}

TEST_P(LayerOps, SiluMulMatchesTheReference) {
  for (hal::DType d : declared(*be_))
    for (auto [rows, cols] : {std::pair<int, int>{1, 1}, {3, 37}, {8, 256}, {0, 5}})
      expect_pass(hal::check_silu_mul(*be_, d, rows, cols, 2),
                  fmt::format("{} silu_mul {}x{}", hal::flag_name(d), rows, cols));
}

TEST_P(LayerOps, PagedAttentionMatchesTheReference) {
  struct Named {
    const char* what;
    hal::AttentionSpec spec;
  };
  const Named cases[] = {
      {"decode, grouped heads", {5, 1, 4, 2, 16, 4, 19}},
      {"chunked prefill, grouped heads", {3, 6, 8, 2, 8, 4, 23}},
      {"multi-head (no grouping)", {2, 3, 3, 3, 10, 5, 12}},
      {"multi-query (one kv head)", {4, 2, 6, 1, 6, 3, 9}},
      {"one-slot blocks", {2, 4, 2, 1, 4, 1, 7}},
      {"one token, head_dim 1", {1, 1, 1, 1, 1, 16, 1}},
      {"long context, big blocks", {2, 2, 4, 2, 64, 16, 300}},
  };
  for (hal::DType d : declared(*be_))
    for (const Named& c : cases)
      for (std::uint64_t seed : {1u, 2u, 3u})
        expect_pass(hal::check_paged_attention(*be_, d, c.spec, seed),
                    fmt::format("{} paged_attention {} seed {}", hal::flag_name(d), c.what, seed));
}

TEST_P(LayerOps, PagedAttentionIsCausalAndReadsOnlyThroughTheTable) {
  // Two sequences share nothing; poisoning every block the table does not map
  // for positions <= p (NaN in the K/V of the spare blocks and of later
  // positions) must not change a thing.
  hal::AttentionSpec spec{2, 3, 2, 1, 4, 2, 9};
  hal::AttentionCase c = hal::make_attention_case(hal::DType::kF32, spec, 4);
  const hal::AttentionShape& s = c.shape;
  auto run = [&](const hal::AttentionCase& x) {
    std::vector<float> out(s.rows * s.q_heads * s.head_dim, 7.0f);
    hal::AttentionHostData in{x.q.data(),           x.k_cache.data(), x.v_cache.data(),
                              x.block_table.data(), x.seq_ids.data(), x.positions.data()};
    const hal::Status st = hal::paged_attention_host(*be_, hal::DType::kF32, s, in, out.data());
    EXPECT_TRUE(st.ok()) << hal::describe(st);
    return out;
  };
  const auto clean = run(c);
  // The first query row of each sequence must not see its later rows' K/V.
  std::vector<bool> used(s.num_blocks * s.block_size, false);
  for (std::size_t r = 0; r < s.rows; ++r)
    for (std::int64_t t = 0; t <= c.positions[r]; ++t) {
      const auto b = c.block_table[c.seq_ids[r] * s.max_blocks_per_seq +
                                   static_cast<std::uint64_t>(t) / s.block_size];
      used[static_cast<std::size_t>(b) * s.block_size +
           static_cast<std::uint64_t>(t) % s.block_size] = true;
    }
  hal::AttentionCase poisoned = c;
  const std::size_t slot = s.kv_heads * s.head_dim;
  for (std::size_t i = 0; i < used.size(); ++i)
    if (!used[i])
      for (std::size_t e = 0; e < slot; ++e)
        poisoned.k_cache[i * slot + e] = poisoned.v_cache[i * slot + e] = NAN;
  EXPECT_EQ(run(poisoned), clean);
}

TEST_P(LayerOps, TheCoreRefusesInconsistentShapesBeforeTheBackend) {
  std::vector<float> buf(4096, 0.5f);
  std::vector<std::int32_t> idx(64, 0);
  hal::AttentionShape s;
  s.rows = 1;
  s.q_heads = 3;
  s.kv_heads = 2;  // 3 % 2 != 0
  s.head_dim = 4;
  s.q_row_stride = 12;
  s.num_blocks = 2;
  s.block_size = 2;
  s.num_seqs = 1;
  s.max_blocks_per_seq = 2;
  hal::AttentionHostData in{buf.data(), buf.data(), buf.data(), idx.data(), idx.data(), idx.data()};
  std::vector<float> out(64);
  hal::Status st = hal::paged_attention_host(*be_, hal::DType::kF32, s, in, out.data());
  EXPECT_EQ(hal::describe(st),
            "invalid argument: paged_attention: q_heads 3 is not a multiple of kv_heads 2");
  hal::RopeShape r{2, 2, 5, 16, 0, 8};  // odd head_dim
  st = hal::rope_host(*be_, hal::DType::kF32, r, buf.data(), idx.data(), buf.data(), buf.data());
  EXPECT_EQ(hal::describe(st), "invalid argument: rope: head_dim 5 is odd");
  r = {2, 2, 4, 8, 1, 8};  // 1 + 2 x 4 > 8
  st = hal::rope_host(*be_, hal::DType::kF32, r, buf.data(), idx.data(), buf.data(), buf.data());
  EXPECT_EQ(hal::describe(st),
            "invalid argument: rope: x_offset 1 + 2 heads x 4 exceeds row_stride 8");
  st = hal::rmsnorm_host(*be_, hal::DType::kF32, 2, 4, -1.0f, buf.data(), buf.data(), out.data());
  EXPECT_EQ(hal::describe(st), "invalid argument: rmsnorm: eps must be finite and >= 0");
}

// A block id outside the pool: a host backend refuses the call, a device
// backend writes NaN into that row (gpulab_hal.h); neither reads outside.
TEST_P(LayerOps, ABadBlockTableIsRefusedOrPoisonsItsRowOnly) {
  hal::AttentionSpec spec{2, 1, 2, 1, 4, 2, 6};
  hal::AttentionCase c = hal::make_attention_case(hal::DType::kF32, spec, 9);
  const hal::AttentionShape& s = c.shape;
  ASSERT_EQ(s.rows, 2u);
  c.block_table[0] = static_cast<std::int32_t>(s.num_blocks) + 1000;  // seq 0, block 0
  std::vector<float> out(s.rows * s.q_heads * s.head_dim, 7.0f);
  hal::AttentionHostData in{c.q.data(),           c.k_cache.data(), c.v_cache.data(),
                            c.block_table.data(), c.seq_ids.data(), c.positions.data()};
  const hal::Status st = hal::paged_attention_host(*be_, hal::DType::kF32, s, in, out.data());
  if ((be_->features() & GPULAB_HAL_FEATURE_HOST_MEMORY) != 0) {
    EXPECT_EQ(
        hal::describe(st),
        fmt::format("invalid argument: paged_attention: block_table[0][0] = {} is outside [0, {})",
                    s.num_blocks + 1000, s.num_blocks));
  } else {
    ASSERT_TRUE(st.ok()) << hal::describe(st);
    const std::size_t w = s.q_heads * s.head_dim;
    for (std::size_t i = 0; i < w; ++i) EXPECT_TRUE(std::isnan(out[i])) << i;       // row 0: seq 0
    for (std::size_t i = w; i < 2 * w; ++i) EXPECT_FALSE(std::isnan(out[i])) << i;  // row 1: seq 1
  }
  std::vector<std::int32_t> bad_pos{static_cast<std::int32_t>(64)};
  std::vector<float> x(2 * 8, 1.0f), tables(8 * 4, 0.5f);
  const hal::Status rs = hal::rope_host(*be_, hal::DType::kF32, hal::RopeShape{1, 2, 8, 16, 0, 8},
                                        x.data(), bad_pos.data(), tables.data(), tables.data());
  if ((be_->features() & GPULAB_HAL_FEATURE_HOST_MEMORY) != 0) {
    EXPECT_EQ(hal::describe(rs), "invalid argument: rope: positions[0] = 64 is outside [0, 8)");
  } else {
    ASSERT_TRUE(rs.ok()) << hal::describe(rs);
    for (float v : x) EXPECT_TRUE(std::isnan(v));
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, LayerOps, ::testing::Values("cpu_ref", "fast", "opencl", "cuda"),
                         [](const auto& p) { return p.param; });

// The backends that stay at ABI 2.1 on purpose (blas, limited, liar) load
// and say why each new op is unavailable.
TEST(LayerOpsOn21, TheStayAt21BackendsLoadAndReportTheOpsUnsupported) {
  for (const char* name : {"limited", "liar", "blas"}) {
    if (!built(name)) continue;
    hal::Registry reg;
    ASSERT_TRUE(reg.load(backend(name))) << name;
    const hal::Backend& b = *reg.find(name);
    EXPECT_EQ(b.abi_minor(), 1u) << name;
    for (hal::Op o : hal::kLayerOps)
      EXPECT_EQ(hal::describe(b.usable(o, hal::DType::kF32)),
                fmt::format("unsupported: backend {} (ABI 2.1) does not declare {}", name,
                            hal::op_name(o)));
  }
}

// Routing: the v2.2 ops go to the fastest backend that has them, never to a 2.1 one.
TEST(LayerOpsRouting, RoutesToTheBestBackendThatHasTheOp) {
  hal::Registry reg;
  for (const char* name : {"cpu_ref", "fast", "limited"})
    ASSERT_TRUE(reg.load(backend(name))) << name;
  for (hal::Op o : hal::kLayerOps) {
    const auto r = reg.route({o, hal::DType::kF32, 8, 64, 16});
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_EQ(r.value()->name(), "fast") << hal::op_name(o);
    const auto bf = reg.route({o, hal::DType::kBF16, 8, 64, 16});
    ASSERT_TRUE(bf) << bf.error().message;
    EXPECT_EQ(bf.value()->name(), "cpu_ref") << hal::op_name(o);  // fast does not declare BF16
  }
  EXPECT_EQ(hal::describe(hal::Request{hal::Op::kPagedAttention, hal::DType::kF16, 8, 512, 64}),
            "FP16 paged_attention 8x512x64");
}

}  // namespace
