#include "gpulab/rng.hpp"

#include <cmath>
#include <numbers>
#include <stdexcept>

namespace gpulab {
namespace {

std::uint64_t splitmix64(std::uint64_t& x) {
  std::uint64_t z = (x += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

__extension__ typedef unsigned __int128 u128;  // GCC/Clang builtin; -Wpedantic wants the marker

constexpr std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

}  // namespace

Rng::Rng(std::uint64_t seed) {
  for (auto& word : s_) word = splitmix64(seed);
}

std::uint64_t Rng::next_u64() {
  const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
  const std::uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = rotl(s_[3], 45);
  return result;
}

double Rng::uniform01() { return static_cast<double>(next_u64() >> 11) * 0x1.0p-53; }

std::int64_t Rng::uniform_int(std::int64_t lo, std::int64_t hi) {
  if (lo > hi) throw std::invalid_argument("uniform_int: lo > hi");
  const std::uint64_t range = static_cast<std::uint64_t>(hi) - static_cast<std::uint64_t>(lo);
  if (range == ~0ull) return static_cast<std::int64_t>(next_u64());
  const std::uint64_t n = range + 1;
  // Lemire's multiply-and-reject: unbiased and usually one multiplication.
  u128 m = static_cast<u128>(next_u64()) * n;
  auto low = static_cast<std::uint64_t>(m);
  if (low < n) {
    const std::uint64_t threshold = (0 - n) % n;
    while (low < threshold) {
      m = static_cast<u128>(next_u64()) * n;
      low = static_cast<std::uint64_t>(m);
    }
  }
  return static_cast<std::int64_t>(static_cast<std::uint64_t>(lo) + static_cast<std::uint64_t>(m >> 64));
}

bool Rng::bernoulli(double p) { return uniform01() < p; }

double Rng::exponential(double rate) {
  if (!(rate > 0)) throw std::invalid_argument("exponential: rate must be > 0");
  return -std::log1p(-uniform01()) / rate;  // 1 - U is in (0, 1], so log never sees 0
}

double Rng::normal(double mean, double stddev) {
  const double u1 = 1.0 - uniform01();  // (0, 1]
  const double u2 = uniform01();
  return mean + stddev * std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
}

double Rng::lognormal(double mu, double sigma) { return std::exp(normal(mu, sigma)); }

std::int64_t Rng::poisson(double lambda) {
  if (lambda < 0) throw std::invalid_argument("poisson: lambda must be >= 0");
  std::int64_t total = 0;
  constexpr double kChunk = 500.0;  // exp(-500) is still a normal double
  while (lambda > 0) {
    const double l = std::min(lambda, kChunk);
    lambda -= l;
    double p = std::exp(-l);
    double cdf = p;
    const double u = uniform01();
    std::int64_t k = 0;
    while (u > cdf && p > 0) {
      ++k;
      p *= l / static_cast<double>(k);
      cdf += p;
    }
    total += k;
  }
  return total;
}

std::size_t Rng::weighted_index(std::span<const double> weights) {
  double sum = 0;
  for (double w : weights) {
    if (w < 0) throw std::invalid_argument("weighted_index: negative weight");
    sum += w;
  }
  if (!(sum > 0)) throw std::invalid_argument("weighted_index: weights sum to zero");
  double u = uniform01() * sum;
  for (std::size_t i = 0; i < weights.size(); ++i) {
    if (u < weights[i]) return i;
    u -= weights[i];
  }
  return weights.size() - 1;  // rounding left u a hair above the last bucket
}

}  // namespace gpulab
