#include "serving/layer_ops.hpp"

namespace serving {

void rms_norm(const float* x, std::span<const float> gain, double eps, float* out) {
  const std::size_t n = gain.size();
  double ss = 0;
  for (std::size_t i = 0; i < n; ++i) ss += static_cast<double>(x[i]) * x[i];
  const auto inv = static_cast<float>(1.0 / std::sqrt(ss / static_cast<double>(n) + eps));
  for (std::size_t i = 0; i < n; ++i) out[i] = x[i] * inv * gain[i];
}

void apply_rope(float* vec, std::size_t heads, std::size_t head_dim, std::span<const float> cos,
                std::span<const float> sin) {
  for (std::size_t h = 0; h < heads; ++h) {
    float* v = vec + h * head_dim;
    for (std::size_t i = 0; i < head_dim / 2; ++i) {
      const float a = v[2 * i], b = v[2 * i + 1];
      v[2 * i] = a * cos[i] - b * sin[i];
      v[2 * i + 1] = a * sin[i] + b * cos[i];
    }
  }
}

void silu_mul(const float* gate_up, std::size_t ffn, float* out) {
  for (std::size_t i = 0; i < ffn; ++i) {
    const float g = gate_up[i];
    out[i] = g / (1.0f + std::exp(-g)) * gate_up[ffn + i];
  }
}

void add_into(float* x, const float* y, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) x[i] += y[i];
}

}  // namespace serving
