#include "platform/task/synthetic_data.hpp"

#include <cmath>
#include <stdexcept>

#include "gpulab/rng.hpp"
#include "platform/task/seed_streams.hpp"

namespace gpulab::platform::task {

Teacher::Teacher(const MlpShape& shape, std::uint64_t seed) : shape_(shape) {
  Rng rng(derive_seed(seed, Stream::kTeacher));
  w1_.resize(shape.inputs * kUnits);
  w2_.resize(kUnits * shape.classes);
  for (double& w : w1_) w = rng.normal(0.0, 1.0 / std::sqrt(static_cast<double>(shape.inputs)));
  for (double& w : w2_) w = rng.normal(0.0, 1.0 / std::sqrt(static_cast<double>(kUnits)));
}

std::uint32_t Teacher::label(const float* x) const {
  std::vector<double> h(kUnits, 0.0);
  for (std::uint64_t i = 0; i < shape_.inputs; ++i)
    for (std::uint64_t u = 0; u < kUnits; ++u) h[u] += x[i] * w1_[i * kUnits + u];
  std::uint32_t best = 0;
  double best_v = 0;
  for (std::uint64_t c = 0; c < shape_.classes; ++c) {
    double v = 0;
    for (std::uint64_t u = 0; u < kUnits; ++u) v += std::tanh(h[u]) * w2_[u * shape_.classes + c];
    if (c == 0 || v > best_v) {
      best = static_cast<std::uint32_t>(c);
      best_v = v;
    }
  }
  return best;
}

Batch make_batch(const Teacher& teacher, const MlpShape& shape, std::uint64_t seed,
                 std::uint64_t first, std::uint64_t count) {
  Batch b;
  b.rows = count;
  b.x.resize(count * shape.inputs);
  b.labels.resize(count);
  for (std::uint64_t r = 0; r < count; ++r) {
    Rng rng(derive_seed(seed, Stream::kSample, first + r));
    float* x = b.x.data() + r * shape.inputs;
    for (std::uint64_t i = 0; i < shape.inputs; ++i)
      x[i] = static_cast<float>(rng.normal(0.0, 1.0));
    b.labels[r] = teacher.label(x);
  }
  return b;
}

Batch shard_for(const Teacher& teacher, const MlpShape& shape, std::uint64_t seed,
                std::uint64_t step, std::uint64_t batch, int rank, int world) {
  if (step < 1 || world < 1 || rank < 0 || rank >= world ||
      batch % static_cast<std::uint64_t>(world) != 0)
    throw std::invalid_argument("shard_for: bad step, rank, world or batch");
  const std::uint64_t per_rank = batch / static_cast<std::uint64_t>(world);
  return make_batch(teacher, shape, seed,
                    (step - 1) * batch + static_cast<std::uint64_t>(rank) * per_rank, per_rank);
}

}  // namespace gpulab::platform::task
