#include "serving/batch_forward.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "gpulab/errors.hpp"

namespace serving {

namespace hal = gpulab::hal;

BatchForward::BatchForward(const Model& model, KvStore& kv, std::size_t block_size)
    : model_(&model),
      kv_(&kv),
      block_size_(block_size),
      ws_(model.backend()),
      ops_(model.backend()) {}

hal::DeviceBuffer& BatchForward::buffer(std::size_t slot, std::size_t floats) {
  reserve_buffer(model_->backend(), dev_[slot], floats * sizeof(float));
  return dev_[slot];
}

void BatchForward::upload(hal::DeviceBuffer& dst, const std::vector<float>& src,
                          std::size_t floats) {
  if (const auto s = model_->backend().upload(dst, src.data(), floats * sizeof(float)); !s.ok())
    throw gpulab::RunError(
        fmt::format("{} upload: {}", model_->backend().name(), hal::describe(s)));
}

void BatchForward::download(std::vector<float>& dst, const hal::DeviceBuffer& src,
                            std::size_t floats) {
  dst.resize(floats);
  if (const auto s = model_->backend().download(dst.data(), src, floats * sizeof(float)); !s.ok())
    throw gpulab::RunError(
        fmt::format("{} download: {}", model_->backend().name(), hal::describe(s)));
}

const std::vector<float>& BatchForward::run(std::span<const BatchRow> rows) {
  const Model& m = *model_;
  const auto& c = m.config();
  const std::size_t n = rows.size(), d = c.d_model, bs = block_size_;
  x_.resize(n * d);
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
  // Positions and tables go up once for every layer; the activations between
  // the ops of a layer stay in backend buffers. Per layer only the residual
  // stream crosses (x up before each norm, the sublayer's output down to be
  // added on the host) and the rotated q|k|v rows come down once for the K/V writes.
  ops_.stage_rows(positions_, tables_, width);
  hal::DeviceBuffer& x = buffer(kX, n * d);
  hal::DeviceBuffer& h = buffer(kH, n * d);
  hal::DeviceBuffer& qkv = buffer(kQkv, n * c.qkv_dim());
  hal::DeviceBuffer& attn = buffer(kAttn, n * d);
  hal::DeviceBuffer& proj = buffer(kProj, n * d);
  hal::DeviceBuffer& gate_up = buffer(kGateUp, n * 2 * c.ffn);
  hal::DeviceBuffer& act = buffer(kAct, n * c.ffn);
  for (std::size_t l = 0; l < c.layers; ++l) {
    upload(x, x_, n * d);
    ops_.rms_norm(x, n, d, m.attn_norm_buffer(l), c.norm_eps, h);
    m.matmul(ws_, Weight::kQkv, l, h, n, qkv);
    ops_.attention(qkv, n, c, l, *kv_, m.rope_cos_table(), m.rope_sin_table(), attn);
    m.matmul(ws_, Weight::kOut, l, attn, n, proj);
    download(proj_, proj, n * d);
    add_into(x_.data(), proj_.data(), n * d);
    upload(x, x_, n * d);
    ops_.rms_norm(x, n, d, m.mlp_norm_buffer(l), c.norm_eps, h);
    m.matmul(ws_, Weight::kGateUp, l, h, n, gate_up);
    ops_.silu_mul(gate_up, n, c.ffn, act);
    m.matmul(ws_, Weight::kDown, l, act, n, proj);
    download(proj_, proj, n * d);
    add_into(x_.data(), proj_.data(), n * d);
  }
  // The final norm of the rows that need logits, gathered first.
  std::size_t out_rows = 0;
  gathered_.resize(n * d);
  for (std::size_t r = 0; r < n; ++r) {
    if (!rows[r].logits) continue;
    std::copy_n(&x_[r * d], d, &gathered_[out_rows * d]);
    ++out_rows;
  }
  if (out_rows > 0) {
    upload(x, gathered_, out_rows * d);
    ops_.rms_norm(x, out_rows, d, m.final_norm_buffer(), c.norm_eps, h);
    hal::DeviceBuffer& logits = buffer(kLogits, out_rows * c.vocab);
    m.matmul(ws_, Weight::kHead, 0, h, out_rows, logits);
    download(logits_, logits, out_rows * c.vocab);
  } else {
    logits_.clear();
  }
  for (std::size_t r = 0; r < n; ++r)
    kv_->mark_filled(rows[r].blocks[rows[r].pos / bs], rows[r].pos % bs);
  return logits_;
}

}  // namespace serving
