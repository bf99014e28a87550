// The model the train job fits: a 3-layer perceptron, inputs -> hidden ->
// hidden -> classes, ReLU between layers, softmax cross-entropy on the last.
// Every matmul — the three forward ones, and per layer dW = X^T dZ and
// dX = dZ W^T (except dX of the input layer, which nothing needs) — runs as an
// FP32 matmul on a HAL backend. Bias adds, ReLU, softmax and the transposes are
// host code: O(elements), deterministic, the same on every backend.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "hal/backend.hpp"

namespace gpulab::platform::task {

struct MlpShape {
  std::uint64_t inputs = 16;
  std::uint64_t hidden = 64;
  std::uint64_t classes = 4;

  // W1 b1 W2 b2 W3 b3, each W row-major (fan_in x fan_out), in this order in
  // the flat parameter vector.
  [[nodiscard]] std::uint64_t param_count() const;
};

// The train job's model: 16 inputs (the synthetic data's features), 4 classes,
// `hidden` wide. The control plane sizes the all-reduce from it too.
MlpShape train_shape(std::uint64_t hidden);

struct Layer {
  std::uint64_t fan_in = 0, fan_out = 0;
  std::uint64_t weight_offset = 0, bias_offset = 0;
};
// The three layers' places in the flat parameter vector.
std::vector<Layer> layers(const MlpShape& shape);

// He-normal weights from the seed (Stream::kInitWeights), zero biases.
std::vector<float> init_params(const MlpShape& shape, std::uint64_t seed);

// A block of samples: x is rows x inputs row-major; labels in [0, classes).
struct Batch {
  std::uint64_t rows = 0;
  std::vector<float> x;
  std::vector<std::uint32_t> labels;
};

struct LossSum {
  double loss = 0;            // sum over the batch's rows of -log p(label)
  std::uint64_t correct = 0;  // rows whose argmax is the label
};

// Forward only.
LossSum evaluate(const hal::Backend& b, const MlpShape& shape, std::span<const float> params,
                 const Batch& batch);

// Forward and backward: writes into `grads` (param_count long) the gradient of
// (sum of the batch's losses) / normalizer. With normalizer = the global batch
// size, the sum over ranks of their shards' gradients is the mean gradient.
LossSum forward_backward(const hal::Backend& b, const MlpShape& shape,
                         std::span<const float> params, const Batch& batch, double normalizer,
                         std::span<float> grads);

// The FLOPs of forward_backward() on `rows` samples, as model FLOP
// utilisation counts them: 2*m*n*k for each of its matmuls (three forward,
// dW of every layer, dX of every layer but the first). Bias adds, ReLU,
// softmax and transposes are O(elements) host code and not counted.
std::uint64_t forward_backward_flops(const MlpShape& shape, std::uint64_t rows);

// params -= lr * grads.
void sgd_update(std::span<float> params, std::span<const float> grads, float lr);

}  // namespace gpulab::platform::task
