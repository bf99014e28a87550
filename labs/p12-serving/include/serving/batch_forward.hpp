// One forward pass over a mixed batch: decode rows (one token of a running
// sequence) and prefill rows (a chunk of a prompt) stacked into one matrix,
// so each weight matrix is read once per step for the whole batch. Each
// row's K/V goes into its sequence's paged blocks before attention, and
// attention reads K/V through the block table. A layer's activations stay in
// backend buffers from op to op; only the residual stream lives on the host.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "paged_kv/block_allocator.hpp"
#include "serving/kv_store.hpp"
#include "serving/layer_ops.hpp"
#include "serving/model.hpp"

namespace serving {

struct BatchRow {
  TokenId token = 0;
  std::size_t pos = 0;                          // position in its sequence
  std::span<const paged_kv::BlockId> blocks;    // its sequence's block table, covering pos
  bool logits = false;                          // the last row of its sequence this step
};

class BatchForward {
 public:
  BatchForward(const Model& model, KvStore& kv, std::size_t block_size);
  // Logits (vocab each) of the rows with logits = true, in row order.
  const std::vector<float>& run(std::span<const BatchRow> rows);
  [[nodiscard]] double flops() const { return ws_.flops(); }

 private:
  // The step's activations on the backend, grown to the largest batch seen.
  enum Tensor : std::size_t { kX, kH, kQkv, kAttn, kProj, kGateUp, kAct, kLogits, kTensors };
  gpulab::hal::DeviceBuffer& buffer(std::size_t slot, std::size_t floats);
  void upload(gpulab::hal::DeviceBuffer& dst, const std::vector<float>& src, std::size_t floats);
  void download(std::vector<float>& dst, const gpulab::hal::DeviceBuffer& src, std::size_t floats);

  const Model* model_;
  KvStore* kv_;
  std::size_t block_size_;
  Workspace ws_;
  LayerKernels ops_;
  gpulab::hal::DeviceBuffer dev_[kTensors];
  std::vector<float> x_, proj_, gathered_, logits_;  // the residual stream and what crosses to it
  std::vector<std::int32_t> positions_, tables_;
};

}  // namespace serving
