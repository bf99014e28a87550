// The decoder's weights, drawn from the config's seed (gpulab::Rng, so the
// same config gives the same model on any machine), with every matrix living
// in a HAL buffer on the chosen backend: all matmuls go through the HAL, and
// so do RMSNorm, RoPE, SiLU-multiply and attention (HAL ABI 2.2, through
// layer_ops.hpp), whose gains and cos/sin tables live on the backend too.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "hal/hal.hpp"
#include "serving/model_config.hpp"
#include "serving/tokenizer.hpp"

namespace serving {

namespace hal = gpulab::hal;

enum class Weight { kQkv, kOut, kGateUp, kDown, kHead };
inline constexpr Weight kLayerWeights[] = {Weight::kQkv, Weight::kOut, Weight::kGateUp, Weight::kDown};

// A weight's matrix is weight_rows x weight_cols (its matmul's k x n).
[[nodiscard]] std::size_t weight_rows(const ModelConfig& c, Weight w);
[[nodiscard]] std::size_t weight_cols(const ModelConfig& c, Weight w);

// Scratch HAL buffers for the activations of one caller (the engine thread,
// a reference decoder); they grow to the largest matmul seen. Not shared
// between threads.
// Grows `buf` to at least `bytes` on `backend` (its contents are not kept);
// throws gpulab::RunError when the backend cannot allocate.
void reserve_buffer(const hal::Backend& backend, hal::DeviceBuffer& buf, std::size_t bytes);

class Workspace {
 public:
  explicit Workspace(const hal::Backend& backend) : backend_(&backend) {}
  // out[m x n] = x[m x k] * w[k x n] on the backend, x and out on the host.
  void matmul(const float* x, std::size_t m, std::size_t k, const hal::DeviceBuffer& w, std::size_t n,
              float* out);
  // The same with x and out already in buffers of the backend: nothing crosses.
  void matmul(const hal::DeviceBuffer& x, std::size_t m, std::size_t k, const hal::DeviceBuffer& w,
              std::size_t n, const hal::DeviceBuffer& out);
  // Floating-point operations issued so far (2 m n k per matmul): the FLOP/s figure.
  [[nodiscard]] double flops() const { return flops_; }

 private:
  void reserve(hal::DeviceBuffer& buf, std::size_t bytes);
  const hal::Backend* backend_;
  hal::DeviceBuffer a_, c_;
  double flops_ = 0;
};

class Model {
 public:
  // Throws std::invalid_argument for an invalid config and gpulab::RunError
  // when the backend cannot hold or run the weights, or lacks one of the
  // decoder-layer ops (a backend built against HAL ABI 2.1 or older).
  Model(const ModelConfig& config, const hal::Backend& backend);

  [[nodiscard]] const ModelConfig& config() const { return config_; }
  [[nodiscard]] const hal::Backend& backend() const { return *backend_; }
  [[nodiscard]] std::span<const float> embedding(TokenId id) const;
  [[nodiscard]] std::span<const float> attn_norm(std::size_t layer) const;
  [[nodiscard]] std::span<const float> mlp_norm(std::size_t layer) const;
  [[nodiscard]] std::span<const float> final_norm() const { return final_norm_; }
  // cos/sin of RoPE for one position: head_dim / 2 each.
  [[nodiscard]] std::span<const float> rope_cos(std::size_t pos) const;
  [[nodiscard]] std::span<const float> rope_sin(std::size_t pos) const;
  // The same gains and tables in HAL buffers on the backend, for layer_ops.
  [[nodiscard]] const hal::DeviceBuffer& attn_norm_buffer(std::size_t layer) const { return layers_.at(layer).attn_norm_buf; }
  [[nodiscard]] const hal::DeviceBuffer& mlp_norm_buffer(std::size_t layer) const { return layers_.at(layer).mlp_norm_buf; }
  [[nodiscard]] const hal::DeviceBuffer& final_norm_buffer() const { return final_norm_buf_; }
  [[nodiscard]] const hal::DeviceBuffer& rope_cos_table() const { return rope_cos_buf_; }
  [[nodiscard]] const hal::DeviceBuffer& rope_sin_table() const { return rope_sin_buf_; }

  // out[m x cols(w)] = x[m x rows(w)] * w, on the backend.
  void matmul(Workspace& ws, Weight w, std::size_t layer, const float* x, std::size_t m, float* out) const;
  // The same on buffers of the backend (x: m x rows(w), out: m x cols(w)).
  void matmul(Workspace& ws, Weight w, std::size_t layer, const hal::DeviceBuffer& x, std::size_t m,
              const hal::DeviceBuffer& out) const;
  [[nodiscard]] std::size_t rows(Weight w) const;
  [[nodiscard]] std::size_t cols(Weight w) const;

 private:
  struct Layer {
    std::vector<float> attn_norm, mlp_norm;
    hal::DeviceBuffer attn_norm_buf, mlp_norm_buf;
    hal::DeviceBuffer qkv, out, gate_up, down;
  };
  hal::DeviceBuffer upload(const std::vector<float>& host) const;
  [[nodiscard]] const hal::DeviceBuffer& weight(Weight w, std::size_t layer) const;

  ModelConfig config_;
  const hal::Backend* backend_;
  std::vector<float> embed_;  // vocab x d_model; the output head is its transpose
  std::vector<Layer> layers_;
  std::vector<float> final_norm_;
  hal::DeviceBuffer head_;  // d_model x vocab: the tied embedding, transposed for C = h * E^T
  std::vector<float> rope_cos_, rope_sin_;  // max_context x head_dim/2
  hal::DeviceBuffer final_norm_buf_, rope_cos_buf_, rope_sin_buf_;
};

}  // namespace serving
