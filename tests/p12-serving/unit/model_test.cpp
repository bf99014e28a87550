#include <fmt/format.h>
#include <gtest/gtest.h>

#include <fstream>

#include "gpulab/errors.hpp"
#include "serving/layer_ops.hpp"
#include "serving/reference_decoder.hpp"
#include "serving/tokenizer.hpp"
#include "test_support.hpp"

namespace {

using namespace serving;

TEST(ModelConfig, SmallPresetIsInTheIssuesParameterRange) {
  ModelConfig c;
  ASSERT_TRUE(preset("small", c));
  EXPECT_GT(c.parameters(), 10'000'000u);
  EXPECT_LT(c.parameters(), 30'000'000u);
  EXPECT_EQ(describe(c),
            "small: 6 layers, d_model 512, 8 heads / 2 KV heads, ffn 1408, vocab 128, context 1024, 17.0 M parameters");
}

TEST(ModelConfig, ImpossibleShapesNameTheField) {
  ModelConfig c = serving_test::tiny();
  c.kv_heads = 3;
  EXPECT_THROW(
      {
        try {
          validate(c);
        } catch (const std::invalid_argument& e) {
          EXPECT_STREQ(e.what(), "kv_heads (3) must divide heads (4)");
          throw;
        }
      },
      std::invalid_argument);
  c = serving_test::tiny();
  c.vocab = 100;
  EXPECT_THROW(validate(c), std::invalid_argument);
}

TEST(ModelConfig, JsonFileRefusesUnknownFields) {
  const std::string path = testing::TempDir() + "serving-model-typo.json";
  std::ofstream(path) << R"({"layers": 2, "d_modle": 64})";
  try {
    (void)load_model_config(path);
    FAIL() << "accepted a typo";
  } catch (const gpulab::UsageError& e) {
    EXPECT_EQ(std::string(e.what()), path + ": unknown field 'd_modle'");
  }
  std::ofstream(path) << R"({"name": "mine", "layers": 1, "d_model": 32, "heads": 2, "kv_heads": 1, "ffn": 64})";
  const ModelConfig c = load_model_config(path);
  EXPECT_EQ(c.name, "mine");
  EXPECT_EQ(c.head_dim(), 16u);
  EXPECT_EQ(c.kv_dim(), 16u);
}

TEST(Tokenizer, AsciiRoundTripsAndOtherIdsShowTheirNumber) {
  const auto ids = encode("Hi\n");
  ASSERT_TRUE(ids);
  EXPECT_EQ(*ids, (std::vector<TokenId>{72, 105, 10}));
  EXPECT_EQ(decode(*ids), "Hi\n");
  EXPECT_EQ(decode(std::vector<TokenId>{3, 65, 127, 200}), "<3>A<127><200>");
  EXPECT_FALSE(encode("caf\xc3\xa9"));
  EXPECT_EQ(first_non_ascii("caf\xc3\xa9"), 3u);
}

TEST(LayerOps, RmsNormThroughTheHalHasUnitRms) {
  const Model& m = serving_test::tiny_model();
  const auto& c = m.config();
  LayerKernels ops(m.backend());
  std::vector<float> x(2 * c.d_model);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 7) - 3.0f;
  std::vector<float> out(x.size());
  ops.rms_norm(x.data(), 2, c.d_model, m.final_norm_buffer(), 1e-12, out.data());
  for (std::size_t r = 0; r < 2; ++r) {
    double ss = 0;
    for (std::size_t i = 0; i < c.d_model; ++i) {
      const double unit = out[r * c.d_model + i] / m.final_norm()[i];
      ss += unit * unit;
    }
    EXPECT_NEAR(ss / static_cast<double>(c.d_model), 1.0, 1e-5);
  }
}

// Position 0 through the HAL: RoPE is the identity, the K/V land in the
// slot, and attending to one position returns its V, head by head.
TEST(LayerOps, AttentionAtPositionZeroReturnsTheValueOfItsKvHead) {
  const Model& m = serving_test::tiny_model();
  const auto& c = m.config();
  LayerKernels ops(m.backend());
  KvStore kv(m.backend(), c.layers, 3, 4, c.kv_dim());
  std::vector<float> qkv(c.qkv_dim());
  for (std::size_t i = 0; i < qkv.size(); ++i) qkv[i] = static_cast<float>(i % 11) * 0.25f - 1.0f;
  const std::vector<float> before = qkv;
  std::vector<float> out(c.d_model);
  ops.attention(qkv.data(), 1, c, {0}, {2}, 1, 0, kv, m.rope_cos_table(), m.rope_sin_table(), out.data());
  EXPECT_EQ(qkv, before);
  const std::size_t hd = c.head_dim(), group = c.heads / c.kv_heads;
  for (std::size_t h = 0; h < c.heads; ++h)
    for (std::size_t i = 0; i < hd; ++i)
      EXPECT_FLOAT_EQ(out[h * hd + i], before[c.d_model + c.kv_dim() + (h / group) * hd + i]) << h << " " << i;
  std::vector<float> slot(c.kv_dim());
  ASSERT_TRUE(m.backend().download(slot.data(), kv.keys(0), slot.size() * 4, 2 * 4 * c.kv_dim() * 4).ok());
  EXPECT_EQ(slot, std::vector<float>(before.begin() + static_cast<std::ptrdiff_t>(c.d_model),
                                     before.begin() + static_cast<std::ptrdiff_t>(c.d_model + c.kv_dim())));
}

// The model lives on one backend, which must have every op of a layer: a
// backend built against HAL ABI 2.1 is refused by name, with the HAL's reason.
TEST(BackendChoice, RefusesABackendWithoutTheDecoderOps) {
  auto& reg = serving_test::registry();
  for (const char* name : {"limited", "blas"}) {
    if (reg.find(name) == nullptr) continue;
    try {
      (void)choose_backend(reg, name);
      FAIL() << name << " accepted";
    } catch (const gpulab::UsageError& e) {
      EXPECT_EQ(std::string(e.what()).rfind(fmt::format("--backend {}: backend {} (ABI 2.1) does not declare rmsnorm (loaded: ", name, name), 0), 0u)
          << e.what();
    }
  }
  const auto& best = choose_backend(reg, "auto");
  for (hal::Op op : hal::kLayerOps) EXPECT_TRUE(best.declares(op)) << best.name();
}

TEST(ReferenceDecoder, SameSeedSameTokensAndStopTokensEnd) {
  const Model& m = serving_test::tiny_model();
  ReferenceDecoder a(m), b(m);
  SamplingParams p;
  p.max_tokens = 12;
  const std::vector<TokenId> prompt = {72, 101, 108, 108, 111};
  const Generation ga = a.generate(prompt, p);
  EXPECT_EQ(ga.tokens.size(), 12u);
  EXPECT_EQ(ga.finish, FinishReason::kLength);
  EXPECT_EQ(b.generate(prompt, p).tokens, ga.tokens);
  // Stopping on the third greedy token ends there, stop token included.
  p.stop = {ga.tokens[2]};
  const Generation stopped = a.generate(prompt, p);
  EXPECT_EQ(stopped.finish, FinishReason::kStop);
  ASSERT_LE(stopped.tokens.size(), 3u);
  EXPECT_EQ(stopped.tokens.back(), ga.tokens[2]);
}

TEST(ReferenceDecoder, SampledTokensDependOnTheSeedOnly) {
  const Model& m = serving_test::tiny_model();
  ReferenceDecoder dec(m);
  SamplingParams p;
  p.max_tokens = 16;
  p.temperature = 1.0;
  p.top_p = 0.9;
  p.seed = 7;
  const std::vector<TokenId> prompt = {1, 2, 3};
  const auto first = dec.generate(prompt, p).tokens;
  EXPECT_EQ(dec.generate(prompt, p).tokens, first);
  p.seed = 8;
  EXPECT_NE(dec.generate(prompt, p).tokens, first);
}

TEST(ReferenceDecoder, FastBackendAgreesWithCpuRef) {
  // Not bit-equality (FMA vs separate multiply-add): the greedy tokens, which is what a user sees.
  ReferenceDecoder ref(serving_test::tiny_model("cpu_ref")), fast(serving_test::tiny_model("fast"));
  SamplingParams p;
  p.max_tokens = 10;
  const std::vector<TokenId> prompt = {10, 20, 30, 40};
  EXPECT_EQ(fast.generate(prompt, p).tokens, ref.generate(prompt, p).tokens);
}

}  // namespace
