#include "batching/cost_model.hpp"

#include <cmath>

#include "gpulab/errors.hpp"

namespace batching {

void validate(const CostModel& m) {
  auto ok = [](double v) { return std::isfinite(v) && v >= 0; };
  if (!ok(m.iter_base_ms) || !ok(m.iter_per_slot_ms) || !ok(m.prefill_ms_per_token))
    throw gpulab::UsageError("iteration and prefill costs must be finite and >= 0");
  if (m.iter_base_ms + m.iter_per_slot_ms <= 0)
    throw gpulab::UsageError(
        "an iteration must take some time (--iter-base-ms or --iter-per-slot-ms > 0)");
}

}  // namespace batching
