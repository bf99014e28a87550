// Seeded synthetic classification data a small MLP can learn: inputs are
// standard normal, labels are the argmax of a fixed random "teacher" network
// (inputs -> 32 tanh units -> classes) drawn from the seed. Sample g of a run
// depends only on (seed, g), so any rank can draw any shard of any batch.
#pragma once

#include <cstdint>
#include <vector>

#include "platform/task/mlp.hpp"

namespace gpulab::platform::task {

class Teacher {
 public:
  Teacher(const MlpShape& shape, std::uint64_t seed);

  [[nodiscard]] std::uint32_t label(const float* x) const;

 private:
  static constexpr std::uint64_t kUnits = 32;
  MlpShape shape_;
  std::vector<double> w1_, w2_;  // inputs x kUnits, kUnits x classes
};

// Samples [first, first + count) of the stream.
Batch make_batch(const Teacher& teacher, const MlpShape& shape, std::uint64_t seed,
                 std::uint64_t first, std::uint64_t count);

// The rows of the global batch of `step` (1-based) that `rank` of `world`
// trains on: a contiguous shard, batch / world samples long.
Batch shard_for(const Teacher& teacher, const MlpShape& shape, std::uint64_t seed,
                std::uint64_t step, std::uint64_t batch, int rank, int world);

}  // namespace gpulab::platform::task
