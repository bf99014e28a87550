// A seeded generator whose samplers give the same numbers with every standard
// library: xoshiro256** seeded through SplitMix64, and samplers written here by
// inverse CDF. (std::*_distribution algorithms are implementation-defined, so
// a table printed from them could differ between libstdc++ and libc++.)
#pragma once

#include <cstdint>
#include <span>
#include <utility>

namespace gpulab {

class Rng {
 public:
  explicit Rng(std::uint64_t seed);

  std::uint64_t next_u64();
  // Uniform in [0, 1) with 53 random bits.
  double uniform01();
  // Uniform integer in [lo, hi], inclusive, without modulo bias (Lemire).
  std::int64_t uniform_int(std::int64_t lo, std::int64_t hi);
  bool bernoulli(double p);
  // Exponential with the given rate (mean 1/rate), by inverse CDF.
  double exponential(double rate);
  // Normal by Box–Muller (uses libm's log/sqrt/cos, which are correctly rounded
  // enough on glibc for reproducible tables).
  double normal(double mean, double stddev);
  double lognormal(double mu, double sigma);
  // Poisson by sequential inverse CDF; large means are split into chunks so
  // exp(-lambda) never underflows.
  std::int64_t poisson(double lambda);
  // Index i with probability weights[i] / sum(weights).
  std::size_t weighted_index(std::span<const double> weights);

  // Fisher–Yates with uniform_int (std::shuffle is implementation-defined).
  template <class T>
  void shuffle(std::span<T> items) {
    for (std::size_t i = items.size(); i > 1; --i) {
      const auto j = static_cast<std::size_t>(uniform_int(0, static_cast<std::int64_t>(i - 1)));
      std::swap(items[i - 1], items[j]);
    }
  }

 private:
  std::uint64_t s_[4];
};

}  // namespace gpulab
