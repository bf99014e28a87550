// Independent random streams derived from one --seed: the matmul chain's
// links, the teacher network, the initial weights and every training sample
// each get their own gpulab::Rng, so a sample's values depend only on
// (seed, its global index) — not on which rank draws it or in what order.
#pragma once

#include <cstdint>

namespace gpulab::platform::task {

enum class Stream : std::uint64_t {
  kMatmulInput = 1,
  kMatmulLink = 2,
  kMatmulSamples = 3,
  kTeacher = 4,
  kInitWeights = 5,
  kSample = 6,
};

// SplitMix64 finalizer over (seed, stream, index): well-mixed and distinct per triple.
std::uint64_t derive_seed(std::uint64_t seed, Stream stream, std::uint64_t index = 0);

}  // namespace gpulab::platform::task
