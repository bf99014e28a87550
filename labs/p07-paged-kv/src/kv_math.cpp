#include "paged_kv/kv_math.hpp"

#include <fmt/core.h>

#include <cmath>
#include <stdexcept>

namespace paged_kv {

std::optional<DType> parse_dtype(std::string_view name) {
  if (name == "fp32") return DType::kFp32;
  if (name == "fp16") return DType::kFp16;
  if (name == "bf16") return DType::kBf16;
  if (name == "fp8") return DType::kFp8;
  if (name == "int8") return DType::kInt8;
  return std::nullopt;
}

std::string_view dtype_name(DType d) {
  switch (d) {
    case DType::kFp32:
      return "fp32";
    case DType::kFp16:
      return "fp16";
    case DType::kBf16:
      return "bf16";
    case DType::kFp8:
      return "fp8";
    case DType::kInt8:
      return "int8";
  }
  return "?";
}

std::uint64_t dtype_bytes(DType d) {
  switch (d) {
    case DType::kFp32:
      return 4;
    case DType::kFp16:
    case DType::kBf16:
      return 2;
    case DType::kFp8:
    case DType::kInt8:
      return 1;
  }
  return 0;
}

const std::vector<ModelShape>& model_presets() {
  // Shapes from the models' published config.json; weights_gb = parameters x
  // 2 bytes, except Llama-3-8B, where we keep the curriculum's round 16 GB.
  static const std::vector<ModelShape> presets = {
      {"llama-3-8b", 32, 8, 128, DType::kBf16, 16.0},
      {"llama-3-70b", 80, 8, 128, DType::kBf16, 141.1},
      {"llama-2-7b", 32, 32, 128, DType::kFp16, 13.5},
      {"llama-2-13b", 40, 40, 128, DType::kFp16, 26.0},
      {"llama-2-70b", 80, 8, 128, DType::kFp16, 138.0},
      {"mistral-7b", 32, 8, 128, DType::kBf16, 14.5},
  };
  return presets;
}

std::optional<ModelShape> find_model(std::string_view name) {
  for (const auto& m : model_presets())
    if (m.name == name) return m;
  return std::nullopt;
}

std::uint64_t kv_bytes_per_token(const ModelShape& m) {
  if (m.layers == 0 || m.kv_heads == 0 || m.head_dim == 0)
    throw std::invalid_argument("layers, kv heads and head dim must all be at least 1");
  if (m.layers > 100'000 || m.kv_heads > 100'000 || m.head_dim > 100'000)
    throw std::invalid_argument("layers, kv heads and head dim must each be at most 100000");
  return 2 * m.layers * m.kv_heads * m.head_dim * dtype_bytes(m.dtype);
}

KvCapacity kv_capacity(const ModelShape& m, std::uint64_t context_tokens, std::uint64_t block_size,
                       double hbm_gb, double reserve_gb) {
  if (context_tokens == 0) throw std::invalid_argument("context must be at least 1 token");
  if (context_tokens > 100'000'000)
    throw std::invalid_argument("context must be at most 100,000,000 tokens");
  if (block_size == 0) throw std::invalid_argument("block size must be at least 1 token");
  if (!(hbm_gb > 0) || !std::isfinite(hbm_gb))
    throw std::invalid_argument("HBM must be a positive number of GB");
  if (!(m.weights_gb >= 0) || !std::isfinite(m.weights_gb))
    throw std::invalid_argument("weights must be a non-negative number of GB");
  if (!(reserve_gb >= 0) || !std::isfinite(reserve_gb))
    throw std::invalid_argument("reserve must be a non-negative number of GB");
  KvCapacity c;
  c.bytes_per_token = kv_bytes_per_token(m);
  c.bytes_per_sequence = c.bytes_per_token * context_tokens;
  c.bytes_per_block = c.bytes_per_token * block_size;
  c.kv_budget_gb = hbm_gb - m.weights_gb - reserve_gb;
  const double budget_bytes = c.kv_budget_gb * 1e9;
  c.sequences_fit = budget_bytes <= 0
                        ? 0
                        : static_cast<std::uint64_t>(
                              std::floor(budget_bytes / static_cast<double>(c.bytes_per_sequence)));
  return c;
}

}  // namespace paged_kv
