// KV-cache sizing: bytes = 2 (K and V) x layers x kv_heads x head_dim x tokens
// x bytes/element, and how many sequences of a given context fit in what HBM
// is left after the weights (and any reserve for activations and fragments).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace paged_kv {

enum class DType { kFp32, kFp16, kBf16, kFp8, kInt8 };
[[nodiscard]] std::optional<DType> parse_dtype(std::string_view name);
[[nodiscard]] std::string_view dtype_name(DType d);
[[nodiscard]] std::uint64_t dtype_bytes(DType d);

struct ModelShape {
  std::string name;
  std::uint64_t layers = 0;
  std::uint64_t kv_heads = 0;  // after GQA: the heads that carry K and V
  std::uint64_t head_dim = 0;
  DType dtype = DType::kBf16;
  double weights_gb = 0;  // decimal GB at the model's native dtype
};

// The presets `--model` knows (public model configs; weights = params x 2 B).
[[nodiscard]] const std::vector<ModelShape>& model_presets();
[[nodiscard]] std::optional<ModelShape> find_model(std::string_view name);

struct KvCapacity {
  std::uint64_t bytes_per_token = 0;
  std::uint64_t bytes_per_sequence = 0;
  std::uint64_t bytes_per_block = 0;
  double kv_budget_gb = 0;          // HBM - weights - reserve (may be negative)
  std::uint64_t sequences_fit = 0;  // 0 when the weights alone do not fit
};

// Throws std::invalid_argument for zero dimensions or context, or a negative budget input.
[[nodiscard]] std::uint64_t kv_bytes_per_token(const ModelShape& m);
[[nodiscard]] KvCapacity kv_capacity(const ModelShape& m, std::uint64_t context_tokens,
                                     std::uint64_t block_size, double hbm_gb, double reserve_gb);

}  // namespace paged_kv
