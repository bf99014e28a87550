// Summary statistics shared by every lab that reports a distribution.
#pragma once

#include <span>
#include <vector>

namespace gpulab {

double mean(std::span<const double> xs);
double median(std::span<const double> xs);
// p in [0, 100]; linear interpolation between closest ranks (NumPy's default).
double percentile(std::span<const double> xs, double p);
// Sample standard deviation (n - 1); 0 for fewer than two values.
double stddev(std::span<const double> xs);

struct Summary {
  std::size_t count = 0;
  double min = 0, max = 0, mean = 0, median = 0, p90 = 0, p99 = 0, stddev = 0;
};
// All of the above in one pass over a sorted copy. Empty input gives all zeros.
Summary summarize(std::span<const double> xs);

}  // namespace gpulab
