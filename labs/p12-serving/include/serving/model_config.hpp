// The shape of the decoder-only transformer the server runs, and the seed its
// weights are drawn from. Built-in presets cover tests ("tiny") and the
// served default ("small", about 17 M parameters); --model FILE reads the
// same fields from JSON.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace serving {

struct ModelConfig {
  std::string name = "small";
  std::size_t layers = 6;
  std::size_t d_model = 512;
  std::size_t heads = 8;
  std::size_t kv_heads = 2;  // grouped-query attention: heads / kv_heads query heads share one KV head
  std::size_t ffn = 1408;    // hidden width of the SiLU-gated MLP
  std::size_t vocab = 128;   // the tokenizer's ids (tokenizer.hpp) must fit
  std::size_t max_context = 1024;
  double rope_theta = 10000.0;
  double norm_eps = 1e-5;
  std::uint64_t seed = 1;

  [[nodiscard]] std::size_t head_dim() const { return d_model / heads; }
  [[nodiscard]] std::size_t kv_dim() const { return kv_heads * head_dim(); }
  [[nodiscard]] std::size_t qkv_dim() const { return d_model + 2 * kv_dim(); }
  // Every weight counted once (the output head is tied to the embedding).
  [[nodiscard]] std::size_t parameters() const;
};

// Throws std::invalid_argument naming the field when the shape is impossible
// (heads not dividing d_model, an odd head_dim for RoPE, a vocab the tokenizer
// cannot address, zero sizes).
void validate(const ModelConfig& c);

// "tiny" or "small"; false for any other name.
bool preset(const std::string& name, ModelConfig& out);

// A preset name, or a JSON file with the fields above (unknown fields refused).
// Throws gpulab::UsageError naming the file and field.
ModelConfig load_model_config(const std::string& name_or_path);

// "small: 6 layers, d_model 512, 8 heads / 2 KV heads, ffn 1408, vocab 128, context 1024, 17.2 M parameters"
std::string describe(const ModelConfig& c);

}  // namespace serving
