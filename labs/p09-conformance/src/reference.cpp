#include "conformance/reference.hpp"

#include <algorithm>
#include <cmath>

#include "conformance/hal_target.hpp"
#include "conformance/tolerance.hpp"
#include "gpulab/rng.hpp"
#include "hal/check.hpp"
#include "hal/reference.hpp"

namespace conformance {
namespace {

// Signed values spread over several binades (2^-3 .. 2), rounded into the
// dtype: small enough that no matmul of the matrix overflows FP8 (max 448).
std::vector<double> random_values(gpulab::Rng& rng, DType t, std::uint64_t count) {
  std::vector<double> v(count);
  for (auto& x : v) {
    const double mag =
        (0.5 + 0.5 * rng.uniform01()) * std::ldexp(1.0, static_cast<int>(rng.uniform_int(-3, 1)));
    x = round_to(t, rng.bernoulli(0.5) ? -mag : mag);
  }
  return v;
}

std::vector<float> as_floats(const std::vector<double>& v) { return {v.begin(), v.end()}; }
template <class T>
std::vector<double> as_doubles(const std::vector<T>& v) {
  return {v.begin(), v.end()};
}

gpulab::hal::AttentionSpec spec_of(const Case& c) {
  gpulab::hal::AttentionSpec spec;
  spec.seqs = c.shape.m;
  spec.max_context = c.shape.n;
  spec.head_dim = c.shape.k;
  spec.q_heads = c.shape.q_heads;
  spec.kv_heads = c.shape.kv_heads;
  spec.block_size = c.shape.block;
  spec.queries = c.shape.queries;
  return spec;
}

// The ABI 2.2 cases. Bounds (tolerance.hpp) per element: the terms of the
// last reduction plus a few units for sqrt/exp/divide.
void layer_case(const Case& c, gpulab::Rng& rng, CaseData& d) {
  const std::uint64_t m = c.shape.m, n = c.shape.n;
  switch (c.op) {
    case Op::kRmsNorm: {
      d.inputs = {random_values(rng, c.dtype, m * n), random_values(rng, c.dtype, n)};
      const auto ref = gpulab::hal::reference_rmsnorm(m, n, kRmsNormEps, as_floats(d.inputs[0]), as_floats(d.inputs[1]));
      d.exact = ref.value;
      for (std::size_t i = 0; i < ref.value.size(); ++i)
        d.bound.push_back(element_bound(c.dtype, ref.value[i], static_cast<double>(n) + 16.0, ref.magnitude[i]));
      break;
    }
    case Op::kRope: {
      const gpulab::hal::RopeShape s = rope_shape(c);
      const std::uint64_t half = s.head_dim / 2;
      std::vector<double> pos(m), cs(s.max_position * half), sn(cs.size());
      for (auto& p : pos) p = static_cast<double>(rng.uniform_int(0, static_cast<std::int64_t>(s.max_position) - 1));
      for (std::uint64_t p = 0; p < s.max_position; ++p)
        for (std::uint64_t i = 0; i < half; ++i) {
          const double angle = static_cast<double>(p) * std::pow(1e4, -2.0 * static_cast<double>(i) /
                                                                      static_cast<double>(s.head_dim));
          cs[p * half + i] = static_cast<float>(std::cos(angle));
          sn[p * half + i] = static_cast<float>(std::sin(angle));
        }
      d.inputs = {random_values(rng, c.dtype, m * s.row_stride), pos, cs, sn};
      d.kinds = {InputKind::kDType, InputKind::kInt32, InputKind::kF32, InputKind::kF32};
      std::vector<std::int32_t> ipos(pos.begin(), pos.end());
      const auto ref = gpulab::hal::reference_rope(s, as_floats(d.inputs[0]), ipos, as_floats(cs), as_floats(sn));
      d.exact = ref.value;
      d.bound.assign(ref.value.size(), 0.0);  // outside the heads: untouched, bit for bit
      for (std::uint64_t r = 0; r < m; ++r)
        for (std::uint64_t e = 0; e < s.heads * s.head_dim; ++e) {
          const std::uint64_t i = r * s.row_stride + s.x_offset + e;
          d.bound[i] = element_bound(c.dtype, ref.value[i], 4.0, ref.magnitude[i]);
        }
      break;
    }
    case Op::kSiluMul: {
      d.inputs = {random_values(rng, c.dtype, m * 2 * n)};
      const auto ref = gpulab::hal::reference_silu_mul(m, n, as_floats(d.inputs[0]));
      d.exact = ref.value;
      for (std::size_t i = 0; i < ref.value.size(); ++i)
        d.bound.push_back(element_bound(c.dtype, ref.value[i], 16.0, ref.magnitude[i]));
      break;
    }
    case Op::kPagedAttention: {
      const auto a = gpulab::hal::make_attention_case(to_hal(c.dtype), spec_of(c), c.seed);
      d.inputs = {as_doubles(a.q),           as_doubles(a.k_cache), as_doubles(a.v_cache),
                  as_doubles(a.block_table), as_doubles(a.seq_ids), as_doubles(a.positions)};
      d.kinds = {InputKind::kDType, InputKind::kDType, InputKind::kDType,
                 InputKind::kInt32, InputKind::kInt32, InputKind::kInt32};
      const auto ref = gpulab::hal::reference_paged_attention(a.shape, a.q, a.k_cache, a.v_cache, a.block_table,
                                                              a.seq_ids, a.positions);
      d.exact = ref.value;
      const std::size_t per_row = static_cast<std::size_t>(a.shape.q_heads * a.shape.head_dim);
      for (std::size_t i = 0; i < ref.value.size(); ++i) {
        const double context = static_cast<double>(a.positions[i / per_row]) + 1.0;
        d.bound.push_back(element_bound(c.dtype, ref.value[i],
                                        context + static_cast<double>(a.shape.head_dim) + 16.0, ref.magnitude[i]));
      }
      break;
    }
    default:
      break;
  }
}

}  // namespace

gpulab::hal::RopeShape rope_shape(const Case& c) {
  gpulab::hal::RopeShape s;
  s.rows = c.shape.m;
  s.heads = c.shape.n;
  s.head_dim = c.shape.k;
  s.x_offset = c.shape.k;
  s.row_stride = (c.shape.n + 2) * c.shape.k + 1;
  s.max_position = kRopeMaxPosition;
  return s;
}

gpulab::hal::AttentionShape attention_shape(const Case& c, std::uint64_t rows) {
  gpulab::hal::AttentionShape s = gpulab::hal::attention_layout(spec_of(c));
  s.rows = rows;
  return s;
}

std::vector<double> reference_matmul(const std::vector<double>& a, const std::vector<double>& b,
                                     std::uint64_t m, std::uint64_t n, std::uint64_t k) {
  std::vector<double> c(m * n, 0.0);
  for (std::uint64_t i = 0; i < m; ++i)
    for (std::uint64_t j = 0; j < n; ++j) {
      double s = 0;
      for (std::uint64_t p = 0; p < k; ++p) s += a[i * k + p] * b[p * n + j];
      c[i * n + j] = s;
    }
  return c;
}

std::vector<double> reference_softmax(const std::vector<double>& in, std::uint64_t rows,
                                      std::uint64_t cols) {
  std::vector<double> out(rows * cols);
  for (std::uint64_t r = 0; r < rows; ++r) {
    const double* x = in.data() + r * cols;
    const double mx = *std::max_element(x, x + cols);
    double sum = 0;
    for (std::uint64_t j = 0; j < cols; ++j) sum += std::exp(x[j] - mx);
    for (std::uint64_t j = 0; j < cols; ++j) out[r * cols + j] = std::exp(x[j] - mx) / sum;
  }
  return out;
}

CaseData make_case_data(const Case& c) {
  gpulab::Rng rng(c.seed);
  CaseData d;
  const std::uint64_t m = c.shape.m, n = c.shape.n, k = c.shape.k;
  switch (c.op) {
    case Op::kBuffer: {
      std::vector<double> bytes(m);
      for (auto& b : bytes) b = static_cast<double>(rng.uniform_int(0, 255));
      d.inputs = {bytes};
      d.exact = bytes;
      d.bound.assign(m, 0.0);  // bit-exact
      break;
    }
    case Op::kMatmul: {
      d.inputs = {random_values(rng, c.dtype, m * k), random_values(rng, c.dtype, k * n)};
      const auto& a = d.inputs[0];
      const auto& b = d.inputs[1];
      d.exact = reference_matmul(a, b, m, n, k);
      d.bound.resize(m * n);
      for (std::uint64_t i = 0; i < m; ++i)
        for (std::uint64_t j = 0; j < n; ++j) {
          double mag = 0;
          for (std::uint64_t p = 0; p < k; ++p) mag += std::fabs(a[i * k + p] * b[p * n + j]);
          d.bound[i * n + j] =
              element_bound(c.dtype, d.exact[i * n + j], static_cast<double>(k), mag);
        }
      break;
    }
    case Op::kSoftmax: {
      std::vector<double> in(m * n);
      for (std::uint64_t r = 0; r < m; ++r) {
        const double shift = kSoftmaxRowShift * static_cast<double>(static_cast<int>(r % 3) - 1);
        for (std::uint64_t j = 0; j < n; ++j)
          in[r * n + j] = round_to(c.dtype, shift + 8.0 * rng.uniform01() - 4.0);
      }
      d.exact = reference_softmax(in, m, n);
      d.bound.resize(m * n);
      for (std::uint64_t r = 0; r < m; ++r) {
        const double* x = in.data() + r * n;
        const double mx = *std::max_element(x, x + n);
        for (std::uint64_t j = 0; j < n; ++j) {
          // Relative error of a binary32 softmax: the row sum (n terms), x - max
          // rounded then exponentiated (|x - max| units), exp and the divide
          // (a few ulps; OpenCL allows exp 3 ulp): n + |x - max| + 16 units.
          const double y = d.exact[r * n + j];
          const double terms = static_cast<double>(n) + std::fabs(x[j] - mx) + 16.0;
          d.bound[r * n + j] = element_bound(c.dtype, y, terms, y);
        }
      }
      d.inputs = {std::move(in)};
      break;
    }
    case Op::kRmsNorm:
    case Op::kRope:
    case Op::kSiluMul:
    case Op::kPagedAttention:
      layer_case(c, rng, d);
      break;
  }
  return d;
}

}  // namespace conformance
