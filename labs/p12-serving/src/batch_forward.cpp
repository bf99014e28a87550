#include "serving/batch_forward.hpp"

#include <algorithm>

namespace serving {

BatchForward::BatchForward(const Model& model, KvStore& kv, std::size_t block_size)
    : model_(&model),
      kv_(&kv),
      block_size_(block_size),
      ws_(model.backend()),
      ops_(model.backend()) {}

const std::vector<float>& BatchForward::run(std::span<const BatchRow> rows) {
  const Model& m = *model_;
  const auto& c = m.config();
  const std::size_t n = rows.size(), d = c.d_model, bs = block_size_;
  x_.resize(n * d);
  h_.resize(n * d);
  qkv_.resize(n * c.qkv_dim());
  attn_.resize(n * d);
  proj_.resize(n * d);
  gate_up_.resize(n * 2 * c.ffn);
  act_.resize(n * c.ffn);
  // Each row's position and its sequence's block table, padded to the widest
  // (the HAL reads a row's entries up to pos / block_size only).
  std::size_t width = 1;
  for (const BatchRow& r : rows) width = std::max(width, r.blocks.size());
  positions_.assign(n, 0);
  tables_.assign(n * width, 0);
  for (std::size_t r = 0; r < n; ++r) {
    positions_[r] = static_cast<std::int32_t>(rows[r].pos);
    std::copy(rows[r].blocks.begin(), rows[r].blocks.end(),
              tables_.begin() + static_cast<std::ptrdiff_t>(r * width));
    const auto emb = m.embedding(rows[r].token);
    std::copy(emb.begin(), emb.end(), x_.begin() + static_cast<std::ptrdiff_t>(r * d));
  }
  for (std::size_t l = 0; l < c.layers; ++l) {
    ops_.rms_norm(x_.data(), n, d, m.attn_norm_buffer(l), c.norm_eps, h_.data());
    m.matmul(ws_, Weight::kQkv, l, h_.data(), n, qkv_.data());
    ops_.attention(qkv_.data(), n, c, positions_, tables_, width, l, *kv_, m.rope_cos_table(),
                   m.rope_sin_table(), attn_.data());
    m.matmul(ws_, Weight::kOut, l, attn_.data(), n, proj_.data());
    add_into(x_.data(), proj_.data(), n * d);
    ops_.rms_norm(x_.data(), n, d, m.mlp_norm_buffer(l), c.norm_eps, h_.data());
    m.matmul(ws_, Weight::kGateUp, l, h_.data(), n, gate_up_.data());
    ops_.silu_mul(gate_up_.data(), n, c.ffn, act_.data());
    m.matmul(ws_, Weight::kDown, l, act_.data(), n, proj_.data());
    add_into(x_.data(), proj_.data(), n * d);
  }
  // The final norm of the rows that need logits, gathered first.
  std::size_t out_rows = 0;
  for (std::size_t r = 0; r < n; ++r) {
    if (!rows[r].logits) continue;
    std::copy_n(&x_[r * d], d, &attn_[out_rows * d]);
    ++out_rows;
  }
  ops_.rms_norm(attn_.data(), out_rows, d, m.final_norm_buffer(), c.norm_eps, h_.data());
  logits_.resize(out_rows * c.vocab);
  m.matmul(ws_, Weight::kHead, 0, h_.data(), out_rows, logits_.data());
  for (std::size_t r = 0; r < n; ++r)
    kv_->mark_filled(rows[r].blocks[rows[r].pos / bs], rows[r].pos % bs);
  return logits_;
}

}  // namespace serving
