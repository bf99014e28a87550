// Choosing the next token from a row of logits: greedy (temperature 0) or
// temperature + nucleus (top-p) sampling driven by the request's own Rng, so
// a seeded request gives the same tokens whatever else shares its batch.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "gpulab/rng.hpp"
#include "serving/tokenizer.hpp"

namespace serving {

struct SamplingParams {
  std::size_t max_tokens = 16;
  std::vector<TokenId> stop;  // generation ends after emitting one of these
  double temperature = 0;     // 0: greedy
  double top_p = 1;           // keep the smallest set of tokens whose probability reaches top_p
  std::uint64_t seed = 0;
};

// Greedy: the first index of the largest logit (no draw from rng). Otherwise
// softmax(logits / temperature) in double, cut to the top-p nucleus (ties by
// index), one uniform draw.
TokenId sample(std::span<const float> logits, double temperature, double top_p, gpulab::Rng& rng);

}  // namespace serving
