// Model FLOP utilisation: the FLOP count of one training step from the layer
// shapes, the pace lines a train task prints, and the ratio the agent exports.
#include "platform/mfu.hpp"

#include <gtest/gtest.h>

#include "platform/task/mlp.hpp"

namespace {

namespace task = gpulab::platform::task;
using namespace platform;

TEST(Mfu, AStepsFlopsAreTwoMnkPerMatmulOfForwardAndBackward) {
  // 16 -> 64 -> 64 -> 4 on 32 rows. Per layer one rows x fan_in x fan_out matmul costs
  // 2 * 32 * fan_in * fan_out: 65,536 (16x64), 262,144 (64x64), 16,384 (64x4).
  // Forward: all three. dW: all three. dX: layers 2 and 3 (nothing needs layer 1's).
  const auto shape = task::train_shape(64);
  EXPECT_EQ(task::forward_backward_flops(shape, 32), 2U * (65'536 + 262'144 + 16'384) + (262'144 + 16'384));
  // Linear in the rows: a rank of a 4-way gang of batch 64 does a quarter of a 1-way rank's work.
  EXPECT_EQ(task::forward_backward_flops(shape, 64), 4 * task::forward_backward_flops(shape, 16));
  // Wider hidden layers: 16x128, 128x128, 128x4 on one row.
  EXPECT_EQ(task::forward_backward_flops(task::train_shape(128), 1),
            3U * 2 * 16 * 128 + 3U * 2 * 128 * 128 + 3U * 2 * 128 * 4 - 2U * 16 * 128);
}

TEST(Mfu, TheLastCompletePaceLineOfALogCounts) {
  const std::string log =
      R"({"event":"step","step":1,"loss":2.1,"accuracy":0.2})"
      "\n"
      R"({"event":"pace","rank":1,"step":40,"steps":40,"seconds":1.25,"model_flops":4.0e7})"
      "\n"
      R"({"event":"step","step":41,"loss":2.0,"accuracy":0.2})"
      "\n"
      R"({"event":"pace","rank":1,"step":90,"steps":50,"seconds":1.0,"model_flops":5.0e7})"
      "\n"
      R"({"event":"step","step":91,"loss":1.9,"accuracy":0.3})"
      "\n";
  const auto p = last_pace(log);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->rank, 1);
  EXPECT_EQ(p->step, 90U);
  EXPECT_EQ(p->steps, 50U);
  EXPECT_DOUBLE_EQ(achieved_flops(*p), 5.0e7);
  // A tail that cut the newest pace line in half falls back to the one before.
  const std::string cut = log.substr(0, log.find(R"("seconds":1.0)"));
  ASSERT_TRUE(last_pace(cut));
  EXPECT_EQ(last_pace(cut)->step, 40U);
  EXPECT_DOUBLE_EQ(achieved_flops(*last_pace(cut)), 4.0e7 / 1.25);
  // No pace yet (the first comes a second into training), or a matmul task's log.
  EXPECT_FALSE(last_pace(R"({"event":"step","step":1,"loss":2.1,"accuracy":0.2})"));
  EXPECT_FALSE(last_pace(""));
}

TEST(Mfu, UtilisationIsAchievedOverPeak) {
  const Pace p{0, 20, 20, 0.5, 1.0e9};
  EXPECT_DOUBLE_EQ(achieved_flops(p), 2.0e9);
  ASSERT_TRUE(model_flop_utilisation(p, 8.0e9));
  EXPECT_DOUBLE_EQ(*model_flop_utilisation(p, 8.0e9), 0.25);
  EXPECT_FALSE(model_flop_utilisation(p, 0));  // no measured peak: no ratio
  EXPECT_DOUBLE_EQ(achieved_flops(Pace{0, 1, 0, 0, 1e9}), 0);  // no time measured: nothing claimed
}

TEST(Mfu, ThePeakIsTheHalsBestMeasuredMatmul) {
  const auto peak = measure_peak_flops("cpu_ref");
  ASSERT_TRUE(peak) << "cpu_ref is built with the HAL and always loads";
  EXPECT_GT(peak->flops, 1e6);
  EXPECT_TRUE(peak->n == 64 || peak->n == 128 || peak->n == 256) << peak->n;
  EXPECT_EQ(peak->source, "HAL cpu_ref F32 matmul " + std::to_string(peak->n) + "x" + std::to_string(peak->n) + "x" +
                              std::to_string(peak->n) + ", best of 3");
  EXPECT_FALSE(measure_peak_flops("no-such-backend"));
}

TEST(Mfu, LargerSizesAreTimedOnlyWhileTheyFitTheBudget) {
  // No time at all: the smallest size is still measured, nothing larger is tried.
  const auto peak = measure_peak_flops("cpu_ref", std::chrono::nanoseconds(1));
  ASSERT_TRUE(peak);
  EXPECT_EQ(peak->n, kPeakSizes[0]);
  EXPECT_GT(peak->flops, 1e6);
}

}  // namespace
