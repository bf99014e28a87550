#include "serving/batch_forward.hpp"

#include <algorithm>

#include "serving/layer_ops.hpp"

namespace serving {

BatchForward::BatchForward(const Model& model, KvStore& kv, std::size_t block_size)
    : model_(&model), kv_(&kv), block_size_(block_size), ws_(model.backend()) {}

const std::vector<float>& BatchForward::run(std::span<const BatchRow> rows) {
  const Model& m = *model_;
  const auto& c = m.config();
  const std::size_t n = rows.size(), d = c.d_model, hd = c.head_dim(), kvd = c.kv_dim(), qkvd = c.qkv_dim();
  const std::size_t group = c.heads / c.kv_heads, bs = block_size_;
  x_.resize(n * d);
  h_.resize(n * d);
  qkv_.resize(n * qkvd);
  attn_.resize(n * d);
  proj_.resize(n * d);
  gate_up_.resize(n * 2 * c.ffn);
  act_.resize(n * c.ffn);
  for (std::size_t r = 0; r < n; ++r) {
    const auto emb = m.embedding(rows[r].token);
    std::copy(emb.begin(), emb.end(), x_.begin() + static_cast<std::ptrdiff_t>(r * d));
  }
  for (std::size_t l = 0; l < c.layers; ++l) {
    for (std::size_t r = 0; r < n; ++r) rms_norm(&x_[r * d], m.attn_norm(l), c.norm_eps, &h_[r * d]);
    m.matmul(ws_, Weight::kQkv, l, h_.data(), n, qkv_.data());
    // Every row's K/V first: a prefill chunk's later rows attend to its earlier ones.
    for (std::size_t r = 0; r < n; ++r) {
      float* q = &qkv_[r * qkvd];
      float* k = q + d;
      const float* v = k + kvd;
      const std::size_t pos = rows[r].pos;
      apply_rope(q, c.heads, hd, m.rope_cos(pos), m.rope_sin(pos));
      apply_rope(k, c.kv_heads, hd, m.rope_cos(pos), m.rope_sin(pos));
      const paged_kv::BlockId block = rows[r].blocks[pos / bs];
      std::copy_n(k, kvd, kv_->key(l, block, pos % bs));
      std::copy_n(v, kvd, kv_->value(l, block, pos % bs));
    }
    for (std::size_t r = 0; r < n; ++r) {
      const auto blocks = rows[r].blocks;
      const float* q = &qkv_[r * qkvd];
      for (std::size_t h = 0; h < c.heads; ++h) {
        const std::size_t off = (h / group) * hd;
        attend(
            q + h * hd, rows[r].pos + 1, hd, [&](std::size_t t) { return kv_->key(l, blocks[t / bs], t % bs) + off; },
            [&](std::size_t t) { return kv_->value(l, blocks[t / bs], t % bs) + off; }, &attn_[r * d + h * hd],
            scores_);
      }
    }
    m.matmul(ws_, Weight::kOut, l, attn_.data(), n, proj_.data());
    add_into(x_.data(), proj_.data(), n * d);
    for (std::size_t r = 0; r < n; ++r) rms_norm(&x_[r * d], m.mlp_norm(l), c.norm_eps, &h_[r * d]);
    m.matmul(ws_, Weight::kGateUp, l, h_.data(), n, gate_up_.data());
    for (std::size_t r = 0; r < n; ++r) silu_mul(&gate_up_[r * 2 * c.ffn], c.ffn, &act_[r * c.ffn]);
    m.matmul(ws_, Weight::kDown, l, act_.data(), n, proj_.data());
    add_into(x_.data(), proj_.data(), n * d);
  }
  std::size_t out_rows = 0;
  for (std::size_t r = 0; r < n; ++r) {
    if (!rows[r].logits) continue;
    rms_norm(&x_[r * d], m.final_norm(), c.norm_eps, &h_[out_rows * d]);
    ++out_rows;
  }
  logits_.resize(out_rows * c.vocab);
  m.matmul(ws_, Weight::kHead, 0, h_.data(), out_rows, logits_.data());
  for (std::size_t r = 0; r < n; ++r)
    kv_->mark_filled(rows[r].blocks[rows[r].pos / bs], rows[r].pos % bs);
  return logits_;
}

}  // namespace serving
