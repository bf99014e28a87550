#include "serving/cost_fit.hpp"

#include <fmt/format.h>

#include <cmath>

namespace serving {
namespace {

// Solves a (k x k) system by Gaussian elimination with partial pivoting; false when singular.
bool solve(std::vector<std::vector<double>> a, std::vector<double> b, std::vector<double>& out) {
  const std::size_t k = b.size();
  double scale = 0;
  for (const auto& row : a)
    for (double v : row) scale = std::max(scale, std::abs(v));
  for (std::size_t c = 0; c < k; ++c) {
    std::size_t p = c;
    for (std::size_t r = c + 1; r < k; ++r)
      if (std::abs(a[r][c]) > std::abs(a[p][c])) p = r;
    if (std::abs(a[p][c]) <= 1e-12 * scale) return false;
    std::swap(a[p], a[c]);
    std::swap(b[p], b[c]);
    for (std::size_t r = c + 1; r < k; ++r) {
      const double f = a[r][c] / a[c][c];
      for (std::size_t j = c; j < k; ++j) a[r][j] -= f * a[c][j];
      b[r] -= f * b[c];
    }
  }
  out.assign(k, 0);
  for (std::size_t c = k; c-- > 0;) {
    double v = b[c];
    for (std::size_t j = c + 1; j < k; ++j) v -= a[c][j] * out[j];
    out[c] = v / a[c][c];
  }
  return true;
}

}  // namespace

gpulab::Expected<LinearFit> fit_nonnegative(const std::vector<std::vector<double>>& x,
                                            std::span<const double> y) {
  if (x.size() != y.size()) return gpulab::Error{"one row of features per sample"};
  if (y.empty()) return gpulab::Error{"no samples to fit"};
  const std::size_t k = x.front().size();
  for (const auto& row : x)
    if (row.size() != k) return gpulab::Error{"every row needs the same features"};
  if (k > 8) return gpulab::Error{"at most 8 features (every subset is solved)"};

  auto sse_of = [&](const std::vector<double>& coef) {
    double s = 0;
    for (std::size_t i = 0; i < y.size(); ++i) {
      double r = y[i];
      for (std::size_t j = 0; j < k; ++j) r -= coef[j] * x[i][j];
      s += r * r;
    }
    return s;
  };
  std::vector<double> best(k, 0.0);  // the empty subset is always feasible
  double best_sse = sse_of(best);
  for (unsigned mask = 1; mask < (1u << k); ++mask) {
    std::vector<std::size_t> cols;
    for (std::size_t j = 0; j < k; ++j)
      if (mask & (1u << j)) cols.push_back(j);
    const std::size_t n = cols.size();
    std::vector<std::vector<double>> ata(n, std::vector<double>(n, 0.0));
    std::vector<double> aty(n, 0.0), sol;
    for (std::size_t i = 0; i < y.size(); ++i)
      for (std::size_t a = 0; a < n; ++a) {
        aty[a] += x[i][cols[a]] * y[i];
        for (std::size_t b = 0; b < n; ++b) ata[a][b] += x[i][cols[a]] * x[i][cols[b]];
      }
    if (!solve(ata, aty, sol)) continue;
    std::vector<double> coef(k, 0.0);
    bool feasible = true;
    for (std::size_t a = 0; a < n; ++a) {
      feasible = feasible && sol[a] >= 0;
      coef[cols[a]] = sol[a];
    }
    if (!feasible) continue;
    if (const double sse = sse_of(coef); sse < best_sse) {
      best_sse = sse;
      best = coef;
    }
  }
  LinearFit f;
  f.coef = best;
  f.samples = y.size();
  f.rms_ms = std::sqrt(best_sse / static_cast<double>(y.size()));
  double mean = 0;
  for (double v : y) mean += v;
  mean /= static_cast<double>(y.size());
  double sst = 0;
  for (double v : y) sst += (v - mean) * (v - mean);
  f.r2 = sst > 0 ? 1 - best_sse / sst : 0;
  return f;
}

gpulab::Expected<Calibration> calibrate(std::span<const StepSample> steps) {
  if (steps.size() < 3)
    return gpulab::Error{fmt::format("{} measured steps; a fit needs at least 3", steps.size())};
  std::vector<std::vector<double>> engine_x, sim_x;
  std::vector<double> y;
  for (const StepSample& s : steps) {
    engine_x.push_back({1.0, s.decode_rows, s.prefill_tokens});
    sim_x.push_back({s.decode_rows > 0 ? 1.0 : 0.0, s.prefill_tokens});
    y.push_back(s.ms);
  }
  auto engine = fit_nonnegative(engine_x, y);
  if (!engine) return engine.error();
  auto sim = fit_nonnegative(sim_x, y);
  if (!sim) return sim.error();
  Calibration c;
  c.engine = engine.value();
  c.engine_model = {c.engine.coef[0], c.engine.coef[1], c.engine.coef[2]};
  c.sim = sim.value();
  c.sim_model = {c.sim.coef[0], 0.0, c.sim.coef[1]};
  if (c.engine_model.iter_base_ms + c.engine_model.iter_per_slot_ms <= 0 ||
      c.sim_model.iter_base_ms <= 0)
    return gpulab::Error{
        "the measured steps show no decode cost: the trace needs steps that decode"};
  return c;
}

}  // namespace serving
