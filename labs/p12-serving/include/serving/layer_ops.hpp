// The non-matmul parts of a decoder layer, through the HAL's ABI 2.2 ops
// (RMSNorm, RoPE, SiLU-multiply, paged attention) on the model's backend.
// The reference decoder and the batched engine both call these, so a row's
// arithmetic is the same sequence of backend operations in both: every
// backend here computes each row (and each (row, head) of attention) in an
// order that depends neither on the other rows nor on where the K/V blocks
// lie, and the cpu_ref and fast matmuls sum each output element in an order
// that does not depend on m, so greedy tokens must match exactly, not just
// closely. Each op comes in two forms: on buffers of the backend (the batched
// engine chains them, so a layer's activations stay there between ops) and on
// host arrays (the reference decoder: upload, the same backend op, download).
// The residual stream stays on the host: the HAL has no add op.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "hal/hal.hpp"
#include "serving/kv_store.hpp"
#include "serving/model_config.hpp"

namespace serving {

// x[i] += y[i].
void add_into(float* x, const float* y, std::size_t n);

// One caller's scratch HAL buffers (grown to the largest batch seen; not
// shared between threads). Every method throws gpulab::RunError naming the
// backend and the op when the backend refuses or fails.
class LayerKernels {
 public:
  explicit LayerKernels(const gpulab::hal::Backend& backend) : backend_(&backend) {}

  // out[r] = x[r] / rms(x[r]) * gain, `rows` rows of gain's length; out may be x.
  void rms_norm(const float* x, std::size_t rows, std::size_t width,
                const gpulab::hal::DeviceBuffer& gain, double eps, float* out);
  void rms_norm(const gpulab::hal::DeviceBuffer& x, std::size_t rows, std::size_t width,
                const gpulab::hal::DeviceBuffer& gain, double eps,
                const gpulab::hal::DeviceBuffer& out);
  // out[r, i] = silu(gate_up[r, i]) * gate_up[r, ffn + i].
  void silu_mul(const float* gate_up, std::size_t rows, std::size_t ffn, float* out);
  void silu_mul(const gpulab::hal::DeviceBuffer& gate_up, std::size_t rows, std::size_t ffn,
                const gpulab::hal::DeviceBuffer& out);

  // A step's rows: each row's position and its block table (rows x
  // table_width block ids; entries past a row's last block are never read),
  // uploaded once for every layer's RoPE and attention.
  void stage_rows(const std::vector<std::int32_t>& positions,
                  const std::vector<std::int32_t>& tables, std::size_t table_width);
  // The attention sublayer of the staged rows, qkv and out on the backend:
  // RoPE on q and k in place, the rotated rows downloaded once to write each
  // row's K/V into its slot of `kv`, then paged attention of each query row
  // against positions 0..pos of its own table into out (rows x d_model).
  void attention(const gpulab::hal::DeviceBuffer& qkv, std::size_t rows, const ModelConfig& c,
                 std::size_t layer, KvStore& kv, const gpulab::hal::DeviceBuffer& cos,
                 const gpulab::hal::DeviceBuffer& sin, const gpulab::hal::DeviceBuffer& out);

  // The attention sublayer of `rows` fused QKV rows ([q | k | v], qkv_dim
  // each): rotates q and k by each row's position (cos/sin: max_context x
  // head_dim/2 tables), writes each row's K/V into its slot of `kv`
  // (tables[r]'s block pos / block_size), then attends each query row to
  // positions 0..pos of its own table. `tables` holds rows x table_width
  // block ids (entries past a row's last block are never read). qkv comes
  // back rotated; out gets rows x d_model.
  void attention(float* qkv, std::size_t rows, const ModelConfig& c,
                 const std::vector<std::int32_t>& positions,
                 const std::vector<std::int32_t>& tables, std::size_t table_width,
                 std::size_t layer, KvStore& kv, const gpulab::hal::DeviceBuffer& cos,
                 const gpulab::hal::DeviceBuffer& sin, float* out);

 private:
  gpulab::hal::DeviceBuffer& scratch(std::size_t slot, std::size_t bytes);
  void check(const gpulab::hal::Status& s, const char* what) const;

  const gpulab::hal::Backend* backend_;
  std::vector<gpulab::hal::DeviceBuffer> buffers_;
  std::vector<std::int32_t> positions_, tables_;  // the staged rows, for the K/V writes
  std::size_t table_width_ = 0;
  std::vector<float> rotated_;  // the last attention's qkv rows after RoPE
};

}  // namespace serving
