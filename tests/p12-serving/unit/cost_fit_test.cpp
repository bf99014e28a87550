// The calibration batching-sim's cost model gets from the engine's step
// times: the fits recover known coefficients from synthetic steps, hold every
// coefficient >= 0, and refuse data they cannot fit.
#include "serving/cost_fit.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "gpulab/rng.hpp"

namespace {

using namespace serving;

// Every combination of a few decode widths and prefill chunks, the way a replay mixes them.
std::vector<StepSample> synthetic(double base, double per_row, double per_token,
                                  double noise_ms = 0, std::uint64_t seed = 1) {
  gpulab::Rng rng(seed);
  std::vector<StepSample> steps;
  for (const double rows : {0.0, 1.0, 3.0, 8.0, 17.0, 32.0})
    for (const double tokens : {0.0, 5.0, 64.0, 200.0, 256.0}) {
      if (rows == 0 && tokens == 0) continue;  // an empty batch is never a step
      const double eps = noise_ms * (2 * rng.uniform01() - 1);
      steps.push_back({rows, tokens, base + per_row * rows + per_token * tokens + eps});
    }
  return steps;
}

TEST(CostFit, RecoversKnownCoefficientsFromExactStepTimes) {
  const auto steps = synthetic(12.5, 1.75, 0.031);
  const auto cal = calibrate(steps);
  ASSERT_TRUE(cal) << cal.error().message;
  const Calibration& c = cal.value();
  EXPECT_NEAR(c.engine.coef[0], 12.5, 1e-9);
  EXPECT_NEAR(c.engine.coef[1], 1.75, 1e-9);
  EXPECT_NEAR(c.engine.coef[2], 0.031, 1e-9);
  EXPECT_NEAR(c.engine.rms_ms, 0, 1e-9);
  EXPECT_NEAR(c.engine.r2, 1, 1e-12);
  EXPECT_EQ(c.engine.samples, steps.size());
  // As batching-sim's CostModel: base, per slot, per prefill token.
  EXPECT_DOUBLE_EQ(c.engine_model.iter_base_ms, c.engine.coef[0]);
  EXPECT_DOUBLE_EQ(c.engine_model.iter_per_slot_ms, c.engine.coef[1]);
  EXPECT_DOUBLE_EQ(c.engine_model.prefill_ms_per_token, c.engine.coef[2]);
}

TEST(CostFit, RecoversCoefficientsThroughNoise) {
  const auto cal = calibrate(synthetic(40, 2, 0.5, /*noise_ms=*/1.0, /*seed=*/7));
  ASSERT_TRUE(cal) << cal.error().message;
  const Calibration& c = cal.value();
  EXPECT_NEAR(c.engine.coef[0], 40, 1.0);
  EXPECT_NEAR(c.engine.coef[1], 2, 0.1);
  EXPECT_NEAR(c.engine.coef[2], 0.5, 0.01);
  EXPECT_GT(c.engine.rms_ms, 0.1);
  EXPECT_LT(c.engine.rms_ms, 1.0);
  EXPECT_GT(c.engine.r2, 0.99);
}

TEST(CostFit, TheSimulatorFormIsOneIterationCostPlusAPerTokenPrefill) {
  // Steps that cost 30 ms whenever they decode, however many rows, plus 0.2 ms a prompt token.
  std::vector<StepSample> steps;
  for (const double rows : {0.0, 1.0, 4.0, 16.0})
    for (const double tokens : {0.0, 10.0, 100.0})
      if (rows + tokens > 0)
        steps.push_back({rows, tokens, (rows > 0 ? 30.0 : 0.0) + 0.2 * tokens});
  const auto cal = calibrate(steps);
  ASSERT_TRUE(cal) << cal.error().message;
  const Calibration& c = cal.value();
  EXPECT_NEAR(c.sim.coef[0], 30, 1e-9);
  EXPECT_NEAR(c.sim.coef[1], 0.2, 1e-9);
  EXPECT_NEAR(c.sim.rms_ms, 0, 1e-9);
  EXPECT_DOUBLE_EQ(c.sim_model.iter_base_ms, c.sim.coef[0]);
  EXPECT_EQ(c.sim_model.iter_per_slot_ms, 0.0);
  EXPECT_DOUBLE_EQ(c.sim_model.prefill_ms_per_token, c.sim.coef[1]);
  // The engine form cannot say "30 whenever it decodes": its residual is not zero.
  EXPECT_GT(c.engine.rms_ms, 1.0);
}

TEST(CostFit, ANegativeSlopeIsHeldAtZeroAndTheRestRefitted) {
  // Step time that falls with decode rows: unconstrained least squares would
  // give a negative per-row cost, which batching-sim refuses.
  std::vector<std::vector<double>> x;
  std::vector<double> y;
  for (const double rows : {1.0, 2.0, 4.0, 8.0}) {
    x.push_back({1.0, rows});
    y.push_back(20.0 - rows);
  }
  const auto f = fit_nonnegative(x, y);
  ASSERT_TRUE(f) << f.error().message;
  EXPECT_EQ(f.value().coef[1], 0.0);
  EXPECT_NEAR(f.value().coef[0], (19 + 18 + 16 + 12) / 4.0, 1e-9)
      << "the best constant is the mean";
  for (double v : f.value().coef) EXPECT_GE(v, 0.0);
}

TEST(CostFit, RefusesWhatItCannotFit) {
  EXPECT_FALSE(calibrate(std::vector<StepSample>{{1, 0, 5}, {2, 0, 6}}));
  EXPECT_EQ(calibrate(std::vector<StepSample>{{1, 0, 5}}).error().message,
            "1 measured steps; a fit needs at least 3");
  // Prefill-only steps: no decode cost to give batching-sim.
  const auto prefill_only = calibrate(std::vector<StepSample>{{0, 10, 1}, {0, 20, 2}, {0, 40, 4}});
  ASSERT_FALSE(prefill_only);
  EXPECT_EQ(prefill_only.error().message,
            "the measured steps show no decode cost: the trace needs steps that decode");
  const std::vector<double> y{1.0, 2.0};
  EXPECT_FALSE(fit_nonnegative({{1.0}}, y));
  EXPECT_FALSE(fit_nonnegative({{1.0}, {1.0, 2.0}}, y));
}

}  // namespace
