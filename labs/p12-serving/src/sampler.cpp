#include "serving/sampler.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace serving {

TokenId sample(std::span<const float> logits, double temperature, double top_p, gpulab::Rng& rng) {
  if (temperature <= 0) {
    const auto it = std::max_element(logits.begin(), logits.end());
    return static_cast<TokenId>(it - logits.begin());
  }
  const float max_logit = *std::max_element(logits.begin(), logits.end());
  std::vector<double> p(logits.size());
  double sum = 0;
  for (std::size_t i = 0; i < logits.size(); ++i) {
    p[i] = std::exp((static_cast<double>(logits[i]) - max_logit) / temperature);
    sum += p[i];
  }
  std::vector<std::size_t> order(p.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return p[a] > p[b]; });
  std::size_t keep = 0;
  double mass = 0;
  while (keep < order.size()) {
    mass += p[order[keep]] / sum;
    ++keep;
    if (mass >= top_p) break;
  }
  double u = rng.uniform01() * mass;
  for (std::size_t i = 0; i < keep; ++i) {
    u -= p[order[i]] / sum;
    if (u < 0) return static_cast<TokenId>(order[i]);
  }
  return static_cast<TokenId>(order[keep - 1]);
}

}  // namespace serving
