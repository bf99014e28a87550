// The MLP's backward pass against central finite differences of its own
// forward pass, both through the cpu_ref HAL backend; the parameter layout;
// the synthetic data's sharding; and that SGD on the model lowers the loss.
#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "gpulab/errors.hpp"
#include "gpulab/rng.hpp"
#include "platform/task/hal_backend.hpp"
#include "platform/task/mlp.hpp"
#include "platform/task/synthetic_data.hpp"

namespace task = gpulab::platform::task;

namespace {

const task::HalBackend& cpu_ref() {
  static const task::HalBackend b("cpu_ref");
  return b;
}

TEST(Mlp, ParameterLayoutIsContiguousAndComplete) {
  const task::MlpShape shape{16, 8, 4};
  EXPECT_EQ(shape.param_count(), 16u * 8 + 8 + 8 * 8 + 8 + 8 * 4 + 4);
  const auto ls = task::layers(shape);
  ASSERT_EQ(ls.size(), 3u);
  std::uint64_t at = 0;
  for (const auto& L : ls) {
    EXPECT_EQ(L.weight_offset, at);
    EXPECT_EQ(L.bias_offset, at + L.fan_in * L.fan_out);
    at = L.bias_offset + L.fan_out;
  }
  EXPECT_EQ(at, shape.param_count());
  EXPECT_EQ(ls[0].fan_in, 16u);
  EXPECT_EQ(ls[2].fan_out, 4u);
}

TEST(Mlp, InitIsSeededHeNormalWithZeroBiases) {
  const task::MlpShape shape{16, 64, 4};
  const auto a = task::init_params(shape, 5), b = task::init_params(shape, 5),
             c = task::init_params(shape, 6);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  const auto L = task::layers(shape)[1];
  double sq = 0;
  for (std::uint64_t i = 0; i < L.fan_in * L.fan_out; ++i)
    sq += a[L.weight_offset + i] * a[L.weight_offset + i];
  const double var = sq / static_cast<double>(L.fan_in * L.fan_out);
  EXPECT_NEAR(var, 2.0 / 64, 0.2 * 2.0 / 64);
  for (std::uint64_t i = 0; i < L.fan_out; ++i) EXPECT_EQ(a[L.bias_offset + i], 0.0f);
}

// Central differences of the mean loss in binary32 forward passes: step 1e-3
// keeps rounding noise (~1e-7 / 1e-3) below the tolerance and rarely crosses a
// ReLU kink (1e-2 crosses several here); random non-zero biases help too.
TEST(Mlp, BackwardMatchesFiniteDifferencesOnCpuRef) {
  const task::MlpShape shape{16, 12, 4};
  auto params = task::init_params(shape, 3);
  gpulab::Rng rng(11);
  for (const auto& L : task::layers(shape))
    for (std::uint64_t i = 0; i < L.fan_out; ++i)
      params[L.bias_offset + i] = static_cast<float>(rng.normal(0, 0.3));
  const task::Teacher teacher(shape, 3);
  const task::Batch batch = task::make_batch(teacher, shape, 3, 0, 8);
  const double n = static_cast<double>(batch.rows);
  const auto& be = cpu_ref().backend();

  std::vector<float> grads(params.size());
  const auto ls = task::forward_backward(be, shape, params, batch, n, grads);
  EXPECT_NEAR(ls.loss, task::evaluate(be, shape, params, batch).loss, 1e-9);

  const float h = 1e-3f;
  int checked = 0, bad = 0;
  std::string report;
  for (std::size_t i = 0; i < params.size(); i += 7) {  // every layer, weights and biases
    auto p = params;
    p[i] = params[i] + h;
    const double up = task::evaluate(be, shape, p, batch).loss / n;
    p[i] = params[i] - h;
    const double down = task::evaluate(be, shape, p, batch).loss / n;
    const double fd = (up - down) / (2.0 * static_cast<double>(h));
    ++checked;
    if (std::fabs(fd - grads[i]) > 2e-4 + 2e-2 * std::fabs(fd)) {
      ++bad;
      report += " [" + std::to_string(i) + "] fd=" + std::to_string(fd) +
                " bp=" + std::to_string(grads[i]);
    }
  }
  EXPECT_GT(checked, 20);
  // A ReLU kink inside [p-h, p+h] can spoil one coordinate; a wrong backward spoils most.
  EXPECT_LE(bad, 1) << report;
}

TEST(Mlp, GradientOfAShardedBatchSumsToTheWholeBatch) {
  const task::MlpShape shape{16, 10, 4};
  const auto params = task::init_params(shape, 4);
  const task::Teacher teacher(shape, 4);
  const auto& be = cpu_ref().backend();
  const task::Batch whole = task::make_batch(teacher, shape, 4, 0, 8);
  std::vector<float> g_whole(params.size()), g0(params.size()), g1(params.size());
  task::forward_backward(be, shape, params, whole, 8, g_whole);
  task::forward_backward(be, shape, params, task::make_batch(teacher, shape, 4, 0, 4), 8, g0);
  task::forward_backward(be, shape, params, task::make_batch(teacher, shape, 4, 4, 4), 8, g1);
  for (std::size_t i = 0; i < params.size(); ++i)
    EXPECT_NEAR(g0[i] + g1[i], g_whole[i], 1e-5 + 1e-4 * std::fabs(g_whole[i])) << i;
}

TEST(Mlp, SgdLowersTheLossOnAFixedBatch) {
  const task::MlpShape shape{16, 32, 4};
  auto params = task::init_params(shape, 9);
  const task::Teacher teacher(shape, 9);
  const task::Batch batch = task::make_batch(teacher, shape, 9, 0, 32);
  const auto& be = cpu_ref().backend();
  std::vector<float> grads(params.size());
  const double first = task::forward_backward(be, shape, params, batch, 32, grads).loss / 32;
  double last = first;
  for (int s = 0; s < 50; ++s) {
    task::sgd_update(params, grads, 0.1f);
    last = task::forward_backward(be, shape, params, batch, 32, grads).loss / 32;
  }
  EXPECT_LT(last, 0.5 * first);
}

TEST(SyntheticData, SamplesDependOnlyOnSeedAndIndex) {
  const task::MlpShape shape;
  const task::Teacher teacher(shape, 21);
  const auto whole = task::make_batch(teacher, shape, 21, 64, 64);
  for (int world : {1, 2, 4, 8}) {
    std::vector<float> x;
    std::vector<std::uint32_t> labels;
    for (int r = 0; r < world; ++r) {
      const auto s = task::shard_for(teacher, shape, 21, 2, 64, r, world);
      EXPECT_EQ(s.rows, 64u / static_cast<std::uint64_t>(world));
      x.insert(x.end(), s.x.begin(), s.x.end());
      labels.insert(labels.end(), s.labels.begin(), s.labels.end());
    }
    EXPECT_EQ(x, whole.x) << "world " << world;
    EXPECT_EQ(labels, whole.labels) << "world " << world;
  }
  EXPECT_NE(task::make_batch(teacher, shape, 22, 64, 64).x, whole.x);
  EXPECT_THROW(task::shard_for(teacher, shape, 21, 1, 63, 0, 2), std::invalid_argument);
}

TEST(SyntheticData, TheTeacherUsesEveryClass) {
  const task::MlpShape shape;
  const task::Teacher teacher(shape, 1);
  const auto b = task::make_batch(teacher, shape, 1, 0, 1024);
  std::vector<int> count(shape.classes, 0);
  for (auto l : b.labels) ++count[l];
  for (std::uint64_t c = 0; c < shape.classes; ++c) EXPECT_GT(count[c], 1024 / 20) << "class " << c;
}

TEST(HalBackend, UnknownNamesAreUsageErrorsListingTheLoadedOnes) {
  try {
    task::HalBackend b("no-such-backend");
    FAIL() << "loaded a backend that does not exist";
  } catch (const gpulab::UsageError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("unknown backend 'no-such-backend'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("cpu_ref"), std::string::npos) << msg;
  }
  EXPECT_EQ(cpu_ref().name(), "cpu_ref");
  EXPECT_NO_THROW((void)cpu_ref().other("cpu_ref"));
  EXPECT_THROW((void)cpu_ref().other("nope"), gpulab::UsageError);
}

}  // namespace
