#include "serving/backend_choice.hpp"

#include <fmt/format.h>

#include "gpulab/errors.hpp"

namespace serving {

namespace hal = gpulab::hal;

namespace {
// The model's weights, K/V and activations live on one backend, so it must
// take every op of a decoder layer: F32 matmul and the HAL ABI 2.2 ops.
constexpr hal::Op kDecoderOps[] = {hal::Op::kMatmul, hal::Op::kRmsNorm, hal::Op::kRope, hal::Op::kSiluMul,
                                   hal::Op::kPagedAttention};

std::string why_not_decoder(const hal::Backend& b) {
  for (hal::Op op : kDecoderOps)
    if (const auto s = b.usable(op, hal::DType::kF32); !s.ok()) return s.message;
  return {};
}
}  // namespace

const hal::Backend& choose_backend(const hal::Registry& registry, const std::string& name) {
  std::string loaded;
  for (const auto& b : registry.backends()) loaded += (loaded.empty() ? "" : ", ") + std::string(b->name());
  if (loaded.empty()) loaded = "none";
  if (name == "auto") {
    // The router's order (perf hint, then load order) among backends that can run the whole decoder.
    const hal::Backend* best = nullptr;
    for (const auto& b : registry.backends())
      if (why_not_decoder(*b).empty() && (best == nullptr || b->perf_hint() > best->perf_hint())) best = b.get();
    if (best == nullptr)
      throw gpulab::UsageError(fmt::format(
          "--backend auto: no loaded backend has F32 matmul, rmsnorm, rope, silu_mul and paged_attention (loaded: {})",
          loaded));
    return *best;
  }
  const hal::Backend* b = registry.find(name);
  if (b == nullptr) throw gpulab::UsageError(fmt::format("--backend {}: no loaded backend is named {} (loaded: {})", name, name, loaded));
  if (std::string why = why_not_decoder(*b); !why.empty())
    throw gpulab::UsageError(fmt::format("--backend {}: {} (loaded: {})", name, why, loaded));
  return *b;
}

}  // namespace serving
