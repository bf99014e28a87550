#include "hal/reference.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace gpulab::hal {

Reference reference_matmul(std::uint64_t m, std::uint64_t n, std::uint64_t k,
                           const std::vector<float>& a, const std::vector<float>& b) {
  Reference r;
  r.value.assign(static_cast<std::size_t>(m * n), 0.0);
  r.magnitude.assign(static_cast<std::size_t>(m * n), 0.0);
  for (std::uint64_t i = 0; i < m; ++i) {
    for (std::uint64_t p = 0; p < k; ++p) {
      const double av = a[i * k + p];
      for (std::uint64_t j = 0; j < n; ++j) {
        const double prod = av * static_cast<double>(b[p * n + j]);
        r.value[i * n + j] += prod;
        r.magnitude[i * n + j] += std::fabs(prod);
      }
    }
  }
  // The output is rounded to the dtype too: make sure a zero-magnitude element
  // still allows for that rounding of its (zero) value.
  for (std::size_t i = 0; i < r.value.size(); ++i)
    r.magnitude[i] = std::max(r.magnitude[i], std::fabs(r.value[i]));
  return r;
}

Reference reference_softmax(std::uint64_t rows, std::uint64_t cols, const std::vector<float>& in) {
  Reference r;
  r.value.assign(static_cast<std::size_t>(rows * cols), 0.0);
  for (std::uint64_t i = 0; i < rows; ++i) {
    double mx = -std::numeric_limits<double>::infinity();
    for (std::uint64_t j = 0; j < cols; ++j) mx = std::max(mx, static_cast<double>(in[i * cols + j]));
    double sum = 0;
    for (std::uint64_t j = 0; j < cols; ++j) {
      const double e = std::exp(static_cast<double>(in[i * cols + j]) - mx);
      r.value[i * cols + j] = e;
      sum += e;
    }
    for (std::uint64_t j = 0; j < cols; ++j) r.value[i * cols + j] /= sum;
  }
  r.magnitude = r.value;
  return r;
}

Reference reference_rmsnorm(std::uint64_t rows, std::uint64_t cols, float eps, const std::vector<float>& in,
                            const std::vector<float>& weight) {
  Reference r;
  r.value.assign(static_cast<std::size_t>(rows * cols), 0.0);
  r.magnitude.assign(r.value.size(), 0.0);
  for (std::uint64_t i = 0; i < rows; ++i) {
    double ss = 0;
    for (std::uint64_t j = 0; j < cols; ++j) ss += static_cast<double>(in[i * cols + j]) * in[i * cols + j];
    const double inv = 1.0 / std::sqrt(ss / static_cast<double>(cols) + static_cast<double>(eps));
    for (std::uint64_t j = 0; j < cols; ++j) {
      r.value[i * cols + j] = in[i * cols + j] * inv * weight[j];
      r.magnitude[i * cols + j] = std::fabs(r.value[i * cols + j]);
    }
  }
  return r;
}

Reference reference_rope(const RopeShape& s, const std::vector<float>& x, const std::vector<std::int32_t>& positions,
                         const std::vector<float>& cos_table, const std::vector<float>& sin_table) {
  Reference r;
  r.value.assign(x.begin(), x.end());
  r.magnitude.resize(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) r.magnitude[i] = std::fabs(r.value[i]);
  const std::uint64_t half = s.head_dim / 2;
  for (std::uint64_t row = 0; row < s.rows; ++row) {
    const std::uint64_t p = static_cast<std::uint64_t>(positions[row]);
    for (std::uint64_t h = 0; h < s.heads; ++h) {
      const std::uint64_t base = row * s.row_stride + s.x_offset + h * s.head_dim;
      for (std::uint64_t i = 0; i < half; ++i) {
        const double c = cos_table[p * half + i], sn = sin_table[p * half + i];
        const double u = x[base + 2 * i], v = x[base + 2 * i + 1];
        r.value[base + 2 * i] = u * c - v * sn;
        r.value[base + 2 * i + 1] = u * sn + v * c;
        r.magnitude[base + 2 * i] = std::fabs(u * c) + std::fabs(v * sn);
        r.magnitude[base + 2 * i + 1] = std::fabs(u * sn) + std::fabs(v * c);
      }
    }
  }
  return r;
}

Reference reference_silu_mul(std::uint64_t rows, std::uint64_t cols, const std::vector<float>& in) {
  Reference r;
  r.value.assign(static_cast<std::size_t>(rows * cols), 0.0);
  r.magnitude.assign(r.value.size(), 0.0);
  for (std::uint64_t i = 0; i < rows; ++i)
    for (std::uint64_t j = 0; j < cols; ++j) {
      const double g = in[i * 2 * cols + j], u = in[i * 2 * cols + cols + j];
      r.value[i * cols + j] = g / (1.0 + std::exp(-g)) * u;
      r.magnitude[i * cols + j] = std::fabs(r.value[i * cols + j]);
    }
  return r;
}

Reference reference_paged_attention(const AttentionShape& s, const std::vector<float>& q,
                                    const std::vector<float>& k_cache, const std::vector<float>& v_cache,
                                    const std::vector<std::int32_t>& block_table,
                                    const std::vector<std::int32_t>& seq_ids,
                                    const std::vector<std::int32_t>& positions) {
  Reference r;
  const std::uint64_t hd = s.head_dim;
  r.value.assign(static_cast<std::size_t>(s.rows * s.q_heads * hd), 0.0);
  r.magnitude.assign(r.value.size(), 0.0);
  if (s.kv_heads == 0) return r;
  const std::uint64_t group = s.q_heads / s.kv_heads;
  std::vector<double> w;
  std::vector<std::uint64_t> at;  // element offset of position t's head vector
  for (std::uint64_t row = 0; row < s.rows; ++row) {
    const auto seq = static_cast<std::uint64_t>(seq_ids[row]);
    const std::uint64_t n = static_cast<std::uint64_t>(positions[row]) + 1;
    for (std::uint64_t h = 0; h < s.q_heads; ++h) {
      const std::uint64_t g = h / group, q0 = row * s.q_row_stride + s.q_offset + h * hd;
      w.assign(n, 0.0);
      at.assign(n, 0);
      double mx = -std::numeric_limits<double>::infinity(), spread = 0;
      for (std::uint64_t t = 0; t < n; ++t) {
        const auto b = static_cast<std::uint64_t>(block_table[seq * s.max_blocks_per_seq + t / s.block_size]);
        at[t] = ((b * s.block_size + t % s.block_size) * s.kv_heads + g) * hd;
        double dot = 0, mag = 0;
        for (std::uint64_t i = 0; i < hd; ++i) {
          dot += static_cast<double>(q[q0 + i]) * k_cache[at[t] + i];
          mag += std::fabs(static_cast<double>(q[q0 + i]) * k_cache[at[t] + i]);
        }
        w[t] = dot * s.scale;
        spread = std::max(spread, mag * std::fabs(static_cast<double>(s.scale)));
        mx = std::max(mx, w[t]);
      }
      double sum = 0;
      for (double& x : w) sum += (x = std::exp(x - mx));
      const std::uint64_t o0 = (row * s.q_heads + h) * hd;
      for (std::uint64_t i = 0; i < hd; ++i) {
        double acc = 0, mag = 0;
        for (std::uint64_t t = 0; t < n; ++t) {
          acc += w[t] / sum * v_cache[at[t] + i];
          mag += w[t] / sum * std::fabs(static_cast<double>(v_cache[at[t] + i]));
        }
        r.value[o0 + i] = acc;
        r.magnitude[o0 + i] = mag * (1.0 + spread);
      }
    }
  }
  return r;
}

Tolerance tolerance(DType d) {
  switch (d) {
    case DType::kF32: return {1e-6, 2e-5};
    case DType::kF16: return {1e-6, 2e-3};
    case DType::kBF16: return {1e-6, 1.6e-2};
    case DType::kFP8: return {1e-6, 1.3e-1};
    case DType::kINT8: return {0.5, 0.0};
  }
  return {};
}

double worst_error_ratio(const std::vector<float>& got, const Reference& want, Tolerance tol) {
  if (got.size() != want.value.size()) return std::numeric_limits<double>::infinity();
  double worst = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(got[i])) return std::numeric_limits<double>::infinity();
    const double err = std::fabs(static_cast<double>(got[i]) - want.value[i]);
    worst = std::max(worst, err / (tol.abs + tol.rel * want.magnitude[i]));
  }
  return worst;
}

}  // namespace gpulab::hal
