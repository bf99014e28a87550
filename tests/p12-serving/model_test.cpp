#include <gtest/gtest.h>

#include <fstream>

#include "gpulab/cli.hpp"
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

TEST(LayerOps, RopeAtPositionZeroIsIdentityAndRmsNormHasUnitRms) {
  const Model& m = serving_test::tiny_model();
  std::vector<float> v = {1, 2, 3, 4};
  apply_rope(v.data(), 1, 4, m.rope_cos(0).first(2), m.rope_sin(0).first(2));
  EXPECT_EQ(v, (std::vector<float>{1, 2, 3, 4}));
  const std::vector<float> gain(4, 1.0f);
  std::vector<float> out(4);
  rms_norm(v.data(), gain, 1e-12, out.data());
  double ss = 0;
  for (float x : out) ss += x * x;
  EXPECT_NEAR(ss / 4, 1.0, 1e-6);
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
