// The non-matmul parts of a decoder layer, one row at a time, in plain C++
// (HAL ABI 2.2 will move them behind the HAL). The reference decoder and the
// batched engine both call these, so a row's arithmetic is the same sequence
// of float operations in both: with a batch-invariant matmul (each output
// element's dot product summed in the same order whatever m is, true of
// cpu_ref and fast) greedy tokens must match exactly, not just closely.
#pragma once

#include <cmath>
#include <cstddef>
#include <span>
#include <vector>

namespace serving {

// out = x / rms(x) * gain over n elements. out may alias x.
void rms_norm(const float* x, std::span<const float> gain, double eps, float* out);
// Rotates each (2i, 2i+1) pair of every head by the position's angles.
void apply_rope(float* vec, std::size_t heads, std::size_t head_dim, std::span<const float> cos,
                std::span<const float> sin);
// out[i] = silu(gate[i]) * up[i], with gate_up = [gate | up], each `ffn` wide.
void silu_mul(const float* gate_up, std::size_t ffn, float* out);
// x[i] += y[i].
void add_into(float* x, const float* y, std::size_t n);

// One query head against positions 0..n-1: softmax(q.k_t * scale) weighted sum
// of v_t into out[head_dim]. key(t) and value(t) return that position's head
// vector, wherever it lives (contiguous or a paged block). `scores` is scratch.
template <class KeyAt, class ValueAt>
void attend(const float* q, std::size_t n, std::size_t head_dim, KeyAt key, ValueAt value, float* out,
            std::vector<float>& scores) {
  scores.resize(n);
  const float scale = 1.0f / std::sqrt(static_cast<float>(head_dim));
  float max_score = -INFINITY;
  for (std::size_t t = 0; t < n; ++t) {
    const float* k = key(t);
    float dot = 0;
    for (std::size_t i = 0; i < head_dim; ++i) dot += q[i] * k[i];
    scores[t] = dot * scale;
    if (scores[t] > max_score) max_score = scores[t];
  }
  float sum = 0;
  for (std::size_t t = 0; t < n; ++t) {
    scores[t] = std::exp(scores[t] - max_score);
    sum += scores[t];
  }
  for (std::size_t i = 0; i < head_dim; ++i) out[i] = 0;
  for (std::size_t t = 0; t < n; ++t) {
    const float* v = value(t);
    const float w = scores[t] / sum;
    for (std::size_t i = 0; i < head_dim; ++i) out[i] += w * v[i];
  }
}

}  // namespace serving
