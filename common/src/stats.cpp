#include "gpulab/stats.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

namespace gpulab {
namespace {

double percentile_of_sorted(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) throw std::invalid_argument("percentile of an empty set");
  if (p < 0 || p > 100) throw std::invalid_argument("percentile outside [0, 100]");
  const double rank = p / 100.0 * static_cast<double>(sorted.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(rank));
  const auto hi = std::min(lo + 1, sorted.size() - 1);
  const double frac = rank - static_cast<double>(lo);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * frac;
}

std::vector<double> sorted_copy(std::span<const double> xs) {
  std::vector<double> v(xs.begin(), xs.end());
  std::sort(v.begin(), v.end());
  return v;
}

}  // namespace

double mean(std::span<const double> xs) {
  if (xs.empty()) throw std::invalid_argument("mean of an empty set");
  return std::accumulate(xs.begin(), xs.end(), 0.0) / static_cast<double>(xs.size());
}

double median(std::span<const double> xs) { return percentile_of_sorted(sorted_copy(xs), 50.0); }

double percentile(std::span<const double> xs, double p) {
  return percentile_of_sorted(sorted_copy(xs), p);
}

double stddev(std::span<const double> xs) {
  if (xs.size() < 2) return 0.0;
  const double m = mean(xs);
  double acc = 0;
  for (double x : xs) acc += (x - m) * (x - m);
  return std::sqrt(acc / static_cast<double>(xs.size() - 1));
}

Summary summarize(std::span<const double> xs) {
  Summary s;
  if (xs.empty()) return s;
  const auto v = sorted_copy(xs);
  s.count = v.size();
  s.min = v.front();
  s.max = v.back();
  s.mean = mean(v);
  s.median = percentile_of_sorted(v, 50);
  s.p90 = percentile_of_sorted(v, 90);
  s.p99 = percentile_of_sorted(v, 99);
  s.stddev = stddev(v);
  return s;
}

}  // namespace gpulab
