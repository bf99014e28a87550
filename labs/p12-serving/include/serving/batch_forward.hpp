// One forward pass over a mixed batch: decode rows (one token of a running
// sequence) and prefill rows (a chunk of a prompt) stacked into one matrix,
// so each weight matrix is read once per step for the whole batch. Each
// row's K/V goes into its sequence's paged blocks before attention, and
// attention reads K/V through the block table.
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
  const Model* model_;
  KvStore* kv_;
  std::size_t block_size_;
  Workspace ws_;
  LayerKernels ops_;
  std::vector<float> x_, h_, qkv_, attn_, proj_, gate_up_, act_, logits_;
  std::vector<std::int32_t> positions_, tables_;
};

}  // namespace serving
