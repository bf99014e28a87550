// Calibrates batching-sim's cost model (P07's CostModel) from the engine's
// measured steps: least-squares fits of each step's time to its shape (how
// many rows decoded, how many prompt tokens were prefilled), coefficients
// held >= 0 because batching-sim refuses negative costs.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "batching/cost_model.hpp"
#include "gpulab/expected.hpp"

namespace serving {

struct StepSample {
  double decode_rows = 0;
  double prefill_tokens = 0;
  double ms = 0;
};

struct LinearFit {
  std::vector<double> coef;  // one per feature; 0 where the constraint holds it there
  double rms_ms = 0;         // root mean square residual
  double r2 = 0;             // 1 - residual / total sum of squares (0 when every y is the same)
  std::size_t samples = 0;
};

// Non-negative least squares of y ~ x . coef, x one row of features per
// sample. Exact for the few features used here: the optimum is the plain
// least-squares fit on some subset of the features with every coefficient
// >= 0, so every subset is solved and the best feasible one kept. An error
// when the rows and y differ in number or a row has the wrong width.
gpulab::Expected<LinearFit> fit_nonnegative(const std::vector<std::vector<double>>& x,
                                            std::span<const double> y);

struct Calibration {
  // ms = base + per_decode_row x decode_rows + per_prefill_token x prefill_tokens: how the
  // engine's step time really grows. As a CostModel {base, per_decode_row, per_prefill_token}
  // batching-sim charges per_slot x max_batch on every decode iteration, padded to the width.
  LinearFit engine;
  batching::CostModel engine_model;
  // ms = iteration x [the step decodes] + per_prefill_token x prefill_tokens: batching-sim's own
  // step cost at the configured width, fitted directly (CostModel {iteration, 0, per_token}).
  LinearFit sim;
  batching::CostModel sim_model;
};

// An error when there are fewer than 3 steps or a fit gives batching-sim a
// model it refuses (no decode cost at all).
gpulab::Expected<Calibration> calibrate(std::span<const StepSample> steps);

}  // namespace serving
