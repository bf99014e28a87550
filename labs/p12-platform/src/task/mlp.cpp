#include "platform/task/mlp.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "gpulab/rng.hpp"
#include "platform/task/hal_backend.hpp"
#include "platform/task/seed_streams.hpp"

namespace gpulab::platform::task {

namespace {

using Matrix = std::vector<float>;

Matrix transpose(std::span<const float> a, std::uint64_t rows, std::uint64_t cols) {
  Matrix t(a.size());
  for (std::uint64_t r = 0; r < rows; ++r)
    for (std::uint64_t c = 0; c < cols; ++c) t[c * rows + r] = a[r * cols + c];
  return t;
}

Matrix matmul(const hal::Backend& b, std::uint64_t m, std::uint64_t n, std::uint64_t k,
              std::span<const float> a, std::span<const float> bm) {
  Matrix c(static_cast<std::size_t>(m * n));
  matmul_f32(b, m, n, k, a.data(), bm.data(), c.data());
  return c;
}

void add_bias(Matrix& z, std::uint64_t rows, std::span<const float> bias) {
  const std::uint64_t cols = bias.size();
  for (std::uint64_t r = 0; r < rows; ++r)
    for (std::uint64_t c = 0; c < cols; ++c) z[r * cols + c] += bias[c];
}

Matrix relu(const Matrix& z) {
  Matrix a(z.size());
  for (std::size_t i = 0; i < z.size(); ++i) a[i] = z[i] > 0.0f ? z[i] : 0.0f;
  return a;
}

struct Forward {
  std::vector<Matrix> inputs;  // the input of each layer (x, a1, a2)
  std::vector<Matrix> pre;     // pre-activations z1, z2, z3 (z3 = logits)
};

Forward forward(const hal::Backend& b, const MlpShape& shape, std::span<const float> params,
                const Batch& batch) {
  if (batch.x.size() != batch.rows * shape.inputs || batch.labels.size() != batch.rows)
    throw std::invalid_argument("batch size does not match its rows");
  if (params.size() != shape.param_count())
    throw std::invalid_argument(
        fmt::format("{} parameters, the shape wants {}", params.size(), shape.param_count()));
  Forward f;
  Matrix in = batch.x;
  const auto ls = layers(shape);
  for (std::size_t l = 0; l < ls.size(); ++l) {
    const Layer& L = ls[l];
    Matrix z = matmul(b, batch.rows, L.fan_out, L.fan_in, in,
                      params.subspan(L.weight_offset, L.fan_in * L.fan_out));
    add_bias(z, batch.rows, params.subspan(L.bias_offset, L.fan_out));
    Matrix next = l + 1 < ls.size() ? relu(z) : Matrix{};
    f.inputs.push_back(std::move(in));
    f.pre.push_back(std::move(z));
    in = std::move(next);
  }
  return f;
}

// Cross-entropy of one row of logits, in binary64 (max-subtracted). When
// `dlogits` is given it receives (softmax - onehot) / normalizer.
double row_loss(std::span<const float> logits, std::uint32_t label, double normalizer,
                float* dlogits, bool* correct) {
  const auto best = std::max_element(logits.begin(), logits.end());
  *correct = static_cast<std::uint32_t>(best - logits.begin()) == label;
  const double mx = *best;
  double sum = 0;
  for (const float z : logits) sum += std::exp(static_cast<double>(z) - mx);
  const double lse = mx + std::log(sum);
  if (dlogits != nullptr) {
    for (std::size_t c = 0; c < logits.size(); ++c) {
      const double p = std::exp(static_cast<double>(logits[c]) - lse);
      dlogits[c] = static_cast<float>((p - (c == label ? 1.0 : 0.0)) / normalizer);
    }
  }
  return lse - static_cast<double>(logits[label]);
}

}  // namespace

MlpShape train_shape(std::uint64_t hidden) { return MlpShape{16, hidden, 4}; }

std::uint64_t MlpShape::param_count() const {
  return inputs * hidden + hidden + hidden * hidden + hidden + hidden * classes + classes;
}

std::vector<Layer> layers(const MlpShape& shape) {
  const std::uint64_t dims[] = {shape.inputs, shape.hidden, shape.hidden, shape.classes};
  std::vector<Layer> out;
  std::uint64_t at = 0;
  for (int l = 0; l < 3; ++l) {
    Layer L{dims[l], dims[l + 1], at, at + dims[l] * dims[l + 1]};
    at = L.bias_offset + L.fan_out;
    out.push_back(L);
  }
  return out;
}

std::vector<float> init_params(const MlpShape& shape, std::uint64_t seed) {
  std::vector<float> p(static_cast<std::size_t>(shape.param_count()), 0.0f);
  Rng rng(derive_seed(seed, Stream::kInitWeights));
  for (const Layer& L : layers(shape)) {
    const double stddev = std::sqrt(2.0 / static_cast<double>(L.fan_in));
    for (std::uint64_t i = 0; i < L.fan_in * L.fan_out; ++i)
      p[L.weight_offset + i] = static_cast<float>(rng.normal(0.0, stddev));
  }
  return p;
}

LossSum evaluate(const hal::Backend& b, const MlpShape& shape, std::span<const float> params,
                 const Batch& batch) {
  const Forward f = forward(b, shape, params, batch);
  LossSum s;
  const std::span<const float> logits = f.pre.back();
  for (std::uint64_t r = 0; r < batch.rows; ++r) {
    bool correct = false;
    s.loss += row_loss(logits.subspan(r * shape.classes, shape.classes), batch.labels[r], 1.0,
                       nullptr, &correct);
    s.correct += correct ? 1 : 0;
  }
  return s;
}

LossSum forward_backward(const hal::Backend& b, const MlpShape& shape,
                         std::span<const float> params, const Batch& batch, double normalizer,
                         std::span<float> grads) {
  if (grads.size() != params.size())
    throw std::invalid_argument("gradient and parameter vectors differ in size");
  const Forward f = forward(b, shape, params, batch);
  const std::uint64_t rows = batch.rows;
  LossSum s;
  Matrix dz(static_cast<std::size_t>(rows * shape.classes));
  const std::span<const float> logits = f.pre.back();
  for (std::uint64_t r = 0; r < rows; ++r) {
    bool correct = false;
    s.loss += row_loss(logits.subspan(r * shape.classes, shape.classes), batch.labels[r],
                       normalizer, dz.data() + r * shape.classes, &correct);
    s.correct += correct ? 1 : 0;
  }
  const auto ls = layers(shape);
  for (std::size_t l = ls.size(); l-- > 0;) {
    const Layer& L = ls[l];
    // dW = X^T dZ (fan_in x fan_out), db = column sums of dZ.
    const Matrix xt = transpose(f.inputs[l], rows, L.fan_in);
    const Matrix dw = matmul(b, L.fan_in, L.fan_out, rows, xt, dz);
    std::copy(dw.begin(), dw.end(), grads.begin() + static_cast<std::ptrdiff_t>(L.weight_offset));
    for (std::uint64_t c = 0; c < L.fan_out; ++c) {
      float acc = 0.0f;
      for (std::uint64_t r = 0; r < rows; ++r) acc += dz[r * L.fan_out + c];
      grads[L.bias_offset + c] = acc;
    }
    if (l == 0) break;  // nothing needs the gradient of the input
    // dX = dZ W^T (rows x fan_in), then through the ReLU of the layer below.
    const Matrix wt =
        transpose(params.subspan(L.weight_offset, L.fan_in * L.fan_out), L.fan_in, L.fan_out);
    Matrix dx = matmul(b, rows, L.fan_in, L.fan_out, dz, wt);
    const Matrix& z_below = f.pre[l - 1];
    for (std::size_t i = 0; i < dx.size(); ++i)
      if (!(z_below[i] > 0.0f)) dx[i] = 0.0f;
    dz = std::move(dx);
  }
  return s;
}

std::uint64_t forward_backward_flops(const MlpShape& shape, std::uint64_t rows) {
  std::uint64_t flops = 0;
  const auto ls = layers(shape);
  for (std::size_t l = 0; l < ls.size(); ++l) {
    const std::uint64_t layer = 2 * rows * ls[l].fan_in * ls[l].fan_out;  // one rows x fan_in x fan_out matmul
    flops += layer;                      // forward: Z = X W
    flops += layer;                      // dW = X^T dZ
    if (l > 0) flops += layer;           // dX = dZ W^T
  }
  return flops;
}

void sgd_update(std::span<float> params, std::span<const float> grads, float lr) {
  for (std::size_t i = 0; i < params.size(); ++i) params[i] -= lr * grads[i];
}

}  // namespace gpulab::platform::task
