// The oracle: one sequence, one token per forward pass (prompt included),
// K/V contiguous (one block of a whole context). No batching, no paging, no
// cache reuse — the engine's greedy tokens must equal these for every request mix.
#pragma once

#include <vector>

#include "serving/finish.hpp"
#include "serving/kv_store.hpp"
#include "serving/layer_ops.hpp"
#include "serving/model.hpp"
#include "serving/sampler.hpp"

namespace serving {

struct Generation {
  std::vector<TokenId> tokens;  // the emitted tokens, a final stop token included
  FinishReason finish = FinishReason::kLength;
};

class ReferenceDecoder {
 public:
  explicit ReferenceDecoder(const Model& model);
  // Throws std::invalid_argument for an empty prompt or one that leaves no
  // room in the context.
  Generation generate(const std::vector<TokenId>& prompt, const SamplingParams& params);

 private:
  // Runs `token` at position `pos` (K/V of 0..pos-1 already cached) and
  // returns the vocab logits.
  const std::vector<float>& step(TokenId token, std::size_t pos);

  const Model* model_;
  Workspace ws_;
  LayerKernels ops_;
  KvStore kv_;  // one block of max_context slots: contiguous
  std::vector<float> x_, h_, qkv_, attn_, proj_, gate_up_, act_, logits_;
};

}  // namespace serving
