#include "serving/model.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "gpulab/errors.hpp"
#include "gpulab/rng.hpp"

namespace serving {

void reserve_buffer(const hal::Backend& backend, hal::DeviceBuffer& buf, std::size_t bytes) {
  if (buf.bytes() >= bytes && buf.handle() != nullptr) return;
  auto fresh = backend.allocate(std::max<std::size_t>(bytes, 64));
  if (!fresh) throw gpulab::RunError(fmt::format("{}: {}", backend.name(), fresh.error().message));
  buf = std::move(fresh.value());
}

void Workspace::reserve(hal::DeviceBuffer& buf, std::size_t bytes) {
  reserve_buffer(*backend_, buf, bytes);
}

void Workspace::matmul(const float* x, std::size_t m, std::size_t k, const hal::DeviceBuffer& w,
                       std::size_t n, float* out) {
  if (m == 0) return;
  reserve(a_, m * k * sizeof(float));
  reserve(c_, m * n * sizeof(float));
  auto check = [&](const hal::Status& s, const char* what) {
    if (!s.ok())
      throw gpulab::RunError(fmt::format("{} {} ({}x{}x{}): {}", backend_->name(), what, m, n, k, hal::describe(s)));
  };
  check(backend_->upload(a_, x, m * k * sizeof(float)), "upload");
  matmul(a_, m, k, w, n, c_);
  check(backend_->download(out, c_, m * n * sizeof(float)), "download");
}

void Workspace::matmul(const hal::DeviceBuffer& x, std::size_t m, std::size_t k,
                       const hal::DeviceBuffer& w, std::size_t n, const hal::DeviceBuffer& out) {
  if (m == 0) return;
  if (const auto s = backend_->matmul(hal::DType::kF32, m, n, k, x, w, out); !s.ok())
    throw gpulab::RunError(
        fmt::format("{} matmul ({}x{}x{}): {}", backend_->name(), m, n, k, hal::describe(s)));
  flops_ += 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
}

namespace {
std::vector<float> draw(gpulab::Rng& rng, std::size_t n, double stddev) {
  std::vector<float> v(n);
  for (float& x : v) x = static_cast<float>(rng.normal(0, stddev));
  return v;
}
std::vector<float> gains(gpulab::Rng& rng, std::size_t n) {
  std::vector<float> v(n);
  for (float& x : v) x = static_cast<float>(1.0 + rng.normal(0, 0.1));
  return v;
}
}  // namespace

hal::DeviceBuffer Model::upload(const std::vector<float>& host) const {
  auto buf = backend_->allocate(host.size() * sizeof(float));
  if (!buf) throw gpulab::RunError(fmt::format("{}: {}", backend_->name(), buf.error().message));
  if (const auto s = backend_->upload(buf.value(), host.data(), host.size() * sizeof(float)); !s.ok())
    throw gpulab::RunError(fmt::format("{}: upload of weights: {}", backend_->name(), hal::describe(s)));
  return std::move(buf.value());
}

Model::Model(const ModelConfig& config, const hal::Backend& backend) : config_(config), backend_(&backend) {
  validate(config_);
  for (hal::Op op : {hal::Op::kMatmul, hal::Op::kRmsNorm, hal::Op::kRope, hal::Op::kSiluMul, hal::Op::kPagedAttention})
    if (const auto s = backend.usable(op, hal::DType::kF32); !s.ok())
      throw gpulab::RunError(fmt::format("{}: the decoder needs F32 {}: {}", backend.name(), hal::op_name(op), s.message));
  const std::size_t d = config_.d_model;
  gpulab::Rng rng(config_.seed);
  // Embedding rows of norm about 1, so the tied head's logits are O(1).
  embed_ = draw(rng, config_.vocab * d, 1.0 / std::sqrt(static_cast<double>(d)));
  const double in_d = 1.0 / std::sqrt(static_cast<double>(d));
  const double in_ffn = 1.0 / std::sqrt(static_cast<double>(config_.ffn));
  for (std::size_t l = 0; l < config_.layers; ++l) {
    Layer layer;
    layer.attn_norm = gains(rng, d);
    layer.qkv = upload(draw(rng, d * config_.qkv_dim(), in_d));
    layer.out = upload(draw(rng, d * d, in_d));
    layer.mlp_norm = gains(rng, d);
    layer.gate_up = upload(draw(rng, d * 2 * config_.ffn, in_d));
    layer.down = upload(draw(rng, config_.ffn * d, in_ffn));
    layer.attn_norm_buf = upload(layer.attn_norm);
    layer.mlp_norm_buf = upload(layer.mlp_norm);
    layers_.push_back(std::move(layer));
  }
  final_norm_ = gains(rng, d);
  final_norm_buf_ = upload(final_norm_);
  std::vector<float> head(d * config_.vocab);
  for (std::size_t v = 0; v < config_.vocab; ++v)
    for (std::size_t i = 0; i < d; ++i) head[i * config_.vocab + v] = embed_[v * d + i];
  head_ = upload(head);

  const std::size_t half = config_.head_dim() / 2;
  rope_cos_.resize(config_.max_context * half);
  rope_sin_.resize(config_.max_context * half);
  for (std::size_t p = 0; p < config_.max_context; ++p)
    for (std::size_t i = 0; i < half; ++i) {
      const double freq =
          std::pow(config_.rope_theta, -2.0 * static_cast<double>(i) / static_cast<double>(config_.head_dim()));
      const double angle = static_cast<double>(p) * freq;
      rope_cos_[p * half + i] = static_cast<float>(std::cos(angle));
      rope_sin_[p * half + i] = static_cast<float>(std::sin(angle));
    }
  rope_cos_buf_ = upload(rope_cos_);
  rope_sin_buf_ = upload(rope_sin_);
}

std::span<const float> Model::embedding(TokenId id) const {
  if (id < 0 || static_cast<std::size_t>(id) >= config_.vocab)
    throw std::out_of_range(fmt::format("token {} outside the vocab of {}", id, config_.vocab));
  return {embed_.data() + static_cast<std::size_t>(id) * config_.d_model, config_.d_model};
}
std::span<const float> Model::attn_norm(std::size_t layer) const { return layers_.at(layer).attn_norm; }
std::span<const float> Model::mlp_norm(std::size_t layer) const { return layers_.at(layer).mlp_norm; }
std::span<const float> Model::rope_cos(std::size_t pos) const {
  const std::size_t half = config_.head_dim() / 2;
  return {rope_cos_.data() + pos * half, half};
}
std::span<const float> Model::rope_sin(std::size_t pos) const {
  const std::size_t half = config_.head_dim() / 2;
  return {rope_sin_.data() + pos * half, half};
}

std::size_t weight_rows(const ModelConfig& c, Weight w) { return w == Weight::kDown ? c.ffn : c.d_model; }
std::size_t weight_cols(const ModelConfig& c, Weight w) {
  switch (w) {
    case Weight::kQkv: return c.qkv_dim();
    case Weight::kOut: return c.d_model;
    case Weight::kGateUp: return 2 * c.ffn;
    case Weight::kDown: return c.d_model;
    case Weight::kHead: return c.vocab;
  }
  return 0;
}
std::size_t Model::rows(Weight w) const { return weight_rows(config_, w); }
std::size_t Model::cols(Weight w) const { return weight_cols(config_, w); }

const hal::DeviceBuffer& Model::weight(Weight w, std::size_t layer) const {
  if (w == Weight::kHead) return head_;
  const Layer& l = layers_.at(layer);
  return w == Weight::kQkv      ? l.qkv
         : w == Weight::kOut    ? l.out
         : w == Weight::kGateUp ? l.gate_up
                                : l.down;
}

void Model::matmul(Workspace& ws, Weight w, std::size_t layer, const float* x, std::size_t m, float* out) const {
  ws.matmul(x, m, rows(w), weight(w, layer), cols(w), out);
}

void Model::matmul(Workspace& ws, Weight w, std::size_t layer, const hal::DeviceBuffer& x,
                   std::size_t m, const hal::DeviceBuffer& out) const {
  ws.matmul(x, m, rows(w), weight(w, layer), cols(w), out);
}

}  // namespace serving
