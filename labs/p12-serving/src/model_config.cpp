#include "serving/model_config.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <stdexcept>

#include "gpulab/errors.hpp"
#include "gpulab/file.hpp"
#include "gpulab/json.hpp"
#include "serving/tokenizer.hpp"

namespace serving {
namespace {
constexpr std::size_t kMaxConfigBytes = 64 * 1024;
constexpr std::size_t kMaxDim = 1 << 16;  // any single dimension; keeps weight sizes sane
}  // namespace

std::size_t ModelConfig::parameters() const {
  const std::size_t per_layer = 2 * d_model                  // two RMSNorm gains
                                + d_model * qkv_dim()        // fused Q, K, V
                                + d_model * d_model          // output projection
                                + 3 * d_model * ffn;         // gate, up, down
  return vocab * d_model + layers * per_layer + d_model;     // + final norm
}

void validate(const ModelConfig& c) {
  auto positive = [](std::size_t v, const char* field) {
    if (v == 0 || v > kMaxDim)
      throw std::invalid_argument(fmt::format("{} must be in 1..{}, got {}", field, kMaxDim, v));
  };
  positive(c.layers, "layers");
  positive(c.d_model, "d_model");
  positive(c.heads, "heads");
  positive(c.kv_heads, "kv_heads");
  positive(c.ffn, "ffn");
  positive(c.vocab, "vocab");
  positive(c.max_context, "max_context");
  if (c.d_model % c.heads != 0)
    throw std::invalid_argument(fmt::format("heads ({}) must divide d_model ({})", c.heads, c.d_model));
  if (c.heads % c.kv_heads != 0)
    throw std::invalid_argument(fmt::format("kv_heads ({}) must divide heads ({})", c.kv_heads, c.heads));
  if (c.head_dim() % 2 != 0)
    throw std::invalid_argument(fmt::format("d_model / heads must be even for RoPE, got {}", c.head_dim()));
  if (c.vocab < kTokenizerVocab)
    throw std::invalid_argument(
        fmt::format("vocab must be at least {} (the tokenizer's ids), got {}", kTokenizerVocab, c.vocab));
  if (!(c.rope_theta > 1)) throw std::invalid_argument("rope_theta must be > 1");
  if (!(c.norm_eps > 0)) throw std::invalid_argument("norm_eps must be > 0");
}

bool preset(const std::string& name, ModelConfig& out) {
  if (name == "small") {
    out = ModelConfig{};
    return true;
  }
  if (name == "tiny") {  // the tests' model: fast enough for hundreds of seeded runs
    out = ModelConfig{};
    out.name = "tiny";
    out.layers = 2;
    out.d_model = 64;
    out.heads = 4;
    out.kv_heads = 2;
    out.ffn = 128;
    out.max_context = 256;
    return true;
  }
  return false;
}

ModelConfig load_model_config(const std::string& name_or_path) {
  ModelConfig c;
  if (preset(name_or_path, c)) return c;
  auto text = gpulab::read_text_file(name_or_path, kMaxConfigBytes);
  if (!text) throw gpulab::UsageError(fmt::format("--model: {}", text.error().message));
  gpulab::Json j;
  try {
    j = gpulab::Json::parse(text.value());
  } catch (const gpulab::Json::parse_error& e) {
    throw gpulab::UsageError(fmt::format("{}: malformed JSON at byte {}", name_or_path, e.byte));
  }
  if (!j.is_object()) throw gpulab::UsageError(fmt::format("{}: expected a JSON object", name_or_path));
  c.name = std::filesystem::path(name_or_path).stem().string();
  for (const auto& [key, value] : j.items()) {
    auto size_field = [&](std::size_t& dst) {
      if (!value.is_number_unsigned())
        throw gpulab::UsageError(fmt::format("{}: {} must be a whole number >= 0", name_or_path, key));
      dst = value.get<std::size_t>();
    };
    auto real_field = [&](double& dst) {
      if (!value.is_number()) throw gpulab::UsageError(fmt::format("{}: {} must be a number", name_or_path, key));
      dst = value.get<double>();
    };
    if (key == "name") {
      if (!value.is_string()) throw gpulab::UsageError(fmt::format("{}: name must be a string", name_or_path));
      c.name = value.get<std::string>();
    } else if (key == "layers") size_field(c.layers);
    else if (key == "d_model") size_field(c.d_model);
    else if (key == "heads") size_field(c.heads);
    else if (key == "kv_heads") size_field(c.kv_heads);
    else if (key == "ffn") size_field(c.ffn);
    else if (key == "vocab") size_field(c.vocab);
    else if (key == "max_context") size_field(c.max_context);
    else if (key == "rope_theta") real_field(c.rope_theta);
    else if (key == "norm_eps") real_field(c.norm_eps);
    else if (key == "seed") {
      if (!value.is_number_unsigned())
        throw gpulab::UsageError(fmt::format("{}: seed must be a whole number >= 0", name_or_path));
      c.seed = value.get<std::uint64_t>();
    } else {
      throw gpulab::UsageError(fmt::format("{}: unknown field '{}'", name_or_path, key));
    }
  }
  try {
    validate(c);
  } catch (const std::invalid_argument& e) {
    throw gpulab::UsageError(fmt::format("{}: {}", name_or_path, e.what()));
  }
  return c;
}

std::string describe(const ModelConfig& c) {
  return fmt::format(
      "{}: {} layers, d_model {}, {} heads / {} KV heads, ffn {}, vocab {}, context {}, {:.1f} M parameters",
      c.name, c.layers, c.d_model, c.heads, c.kv_heads, c.ffn, c.vocab, c.max_context,
      static_cast<double>(c.parameters()) / 1e6);
}

}  // namespace serving
