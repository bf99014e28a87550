// What an iteration costs. Decode: every sequence in the batch emits one
// token per iteration, and the iteration takes base + per_slot x max_batch ms:
// engines capture/pad decode kernels to the configured batch width, so a wider
// configured batch slows every user's TPOT whether or not it is full.
// Prefill: compute-bound, a fixed cost per prompt token.
#pragma once

#include <cstddef>

namespace batching {

struct CostModel {
  double iter_base_ms = 15.0;
  double iter_per_slot_ms = 1.0;
  double prefill_ms_per_token = 0.02;

  [[nodiscard]] double iteration_ms(std::size_t max_batch) const {
    return iter_base_ms + iter_per_slot_ms * static_cast<double>(max_batch);
  }
  [[nodiscard]] double prefill_ms(double tokens) const { return prefill_ms_per_token * tokens; }
};

// Throws gpulab::UsageError for negative or non-finite costs.
void validate(const CostModel& m);

}  // namespace batching
