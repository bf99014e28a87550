#include "hal/check.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <vector>

#include "gpulab/rng.hpp"
#include "hal/reference.hpp"

namespace gpulab::hal {

namespace {
// Random values already representable in `d`, so the reference sees exactly
// what the backend sees and input rounding is not counted as error.
std::vector<float> random_values(Rng& rng, DType d, std::uint64_t count, float lo, float hi) {
  std::vector<float> v(static_cast<std::size_t>(count));
  for (float& x : v) x = quantize(d, lo + (hi - lo) * static_cast<float>(rng.uniform01()));
  return v;
}

CheckResult finish(Status s, DType d, const std::vector<std::uint8_t>& out, std::uint64_t count,
                   const Reference& want) {
  CheckResult r;
  r.declared = true;
  r.status = std::move(s);
  if (!r.status.ok()) {
    r.worst_ratio = std::numeric_limits<double>::infinity();
    return r;
  }
  r.worst_ratio = worst_error_ratio(decode(d, out.data(), count), want, tolerance(d));
  r.pass = r.worst_ratio <= 1.0;
  return r;
}
}  // namespace

CheckResult check_matmul(const Backend& b, DType d, std::uint64_t m, std::uint64_t n, std::uint64_t k,
                         std::uint64_t seed) {
  if (!b.declares(Op::kMatmul) || !b.declares(d)) return {};
  Rng rng(seed);
  const auto a = random_values(rng, d, m * k, -1.0f, 1.0f);
  const auto bm = random_values(rng, d, k * n, -1.0f, 1.0f);
  const auto ea = encode(d, a), eb = encode(d, bm);
  // Pre-fill C with a pattern: a backend that skips writing (k == 0) is caught.
  std::vector<std::uint8_t> c = encode(d, std::vector<float>(static_cast<std::size_t>(m * n), 7.0f));
  Status s = b.matmul_host(d, m, n, k, ea.data(), eb.data(), c.data());
  return finish(std::move(s), d, c, m * n, reference_matmul(m, n, k, a, bm));
}

CheckResult check_softmax(const Backend& b, DType d, std::uint64_t rows, std::uint64_t cols,
                          std::uint64_t seed) {
  if (!b.declares(Op::kSoftmax) || !b.declares(d)) return {};
  Rng rng(seed);
  const auto in = random_values(rng, d, rows * cols, -4.0f, 4.0f);
  const auto ein = encode(d, in);
  std::vector<std::uint8_t> out(ein.size(), 0);
  Status s = b.softmax_host(d, rows, cols, ein.data(), out.data());
  return finish(std::move(s), d, out, rows * cols, reference_softmax(rows, cols, in));
}

CheckResult check_rmsnorm(const Backend& b, DType d, std::uint64_t rows, std::uint64_t cols, std::uint64_t seed) {
  if (!b.declares(Op::kRmsNorm) || !b.declares(d)) return {};
  Rng rng(seed);
  const auto in = random_values(rng, d, rows * cols, -2.0f, 2.0f);
  const auto w = random_values(rng, d, cols, 0.5f, 1.5f);
  const float eps = 1e-5f;
  const auto ein = encode(d, in), ew = encode(d, w);
  std::vector<std::uint8_t> out = encode(d, std::vector<float>(static_cast<std::size_t>(rows * cols), 7.0f));
  Status s = rmsnorm_host(b, d, rows, cols, eps, ein.data(), ew.data(), out.data());
  return finish(std::move(s), d, out, rows * cols, reference_rmsnorm(rows, cols, eps, in, w));
}

CheckResult check_rope(const Backend& b, DType d, std::uint64_t rows, std::uint64_t heads, std::uint64_t head_dim,
                       std::uint64_t seed) {
  if (!b.declares(Op::kRope) || !b.declares(d)) return {};
  Rng rng(seed);
  RopeShape sh;
  sh.rows = rows;
  sh.heads = heads;
  sh.head_dim = head_dim;
  sh.row_stride = (heads + 2) * head_dim + 1;  // q | k | v plus one element nobody may touch
  sh.x_offset = 0;
  sh.max_position = 64;
  const std::uint64_t half = head_dim / 2;
  std::vector<float> cs(sh.max_position * half), sn(cs.size());
  for (std::uint64_t p = 0; p < sh.max_position; ++p)
    for (std::uint64_t i = 0; i < half; ++i) {
      const double angle = static_cast<double>(p) * std::pow(1e4, -2.0 * static_cast<double>(i) / static_cast<double>(head_dim));
      cs[p * half + i] = static_cast<float>(std::cos(angle));
      sn[p * half + i] = static_cast<float>(std::sin(angle));
    }
  std::vector<std::int32_t> pos(rows);
  for (auto& p : pos) p = static_cast<std::int32_t>(rng.uniform01() * static_cast<double>(sh.max_position));
  auto x = random_values(rng, d, rows * sh.row_stride, -2.0f, 2.0f);
  auto ex = encode(d, x);
  Status s = rope_host(b, d, sh, ex.data(), pos.data(), cs.data(), sn.data());
  return finish(std::move(s), d, ex, rows * sh.row_stride, reference_rope(sh, x, pos, cs, sn));
}

CheckResult check_silu_mul(const Backend& b, DType d, std::uint64_t rows, std::uint64_t cols, std::uint64_t seed) {
  if (!b.declares(Op::kSiluMul) || !b.declares(d)) return {};
  Rng rng(seed);
  const auto in = random_values(rng, d, rows * cols * 2, -6.0f, 6.0f);
  const auto ein = encode(d, in);
  std::vector<std::uint8_t> out = encode(d, std::vector<float>(static_cast<std::size_t>(rows * cols), 7.0f));
  Status s = silu_mul_host(b, d, rows, cols, ein.data(), out.data());
  return finish(std::move(s), d, out, rows * cols, reference_silu_mul(rows, cols, in));
}

AttentionShape attention_layout(const AttentionSpec& spec) {
  AttentionShape s;
  s.q_heads = spec.q_heads;
  s.kv_heads = spec.kv_heads;
  s.head_dim = spec.head_dim;
  s.block_size = spec.block_size;
  s.num_seqs = spec.seqs;
  s.max_blocks_per_seq = (spec.max_context + spec.block_size - 1) / spec.block_size;
  s.num_blocks = spec.seqs * s.max_blocks_per_seq + 3;  // spare blocks: never read
  s.q_row_stride = (spec.q_heads + 2 * spec.kv_heads) * spec.head_dim;
  s.q_offset = 0;
  s.scale = 1.0f / std::sqrt(static_cast<float>(std::max<std::uint64_t>(spec.head_dim, 1)));
  return s;
}

AttentionCase make_attention_case(DType d, const AttentionSpec& spec, std::uint64_t seed) {
  Rng rng(seed);
  AttentionCase c;
  c.shape = attention_layout(spec);
  AttentionShape& s = c.shape;
  // Physical blocks in a shuffled order (Fisher-Yates on gpulab::Rng, see ADR 0002).
  std::vector<std::int32_t> pool(s.num_blocks);
  std::iota(pool.begin(), pool.end(), 0);
  for (std::size_t i = pool.size(); i > 1; --i)
    std::swap(pool[i - 1], pool[static_cast<std::size_t>(rng.uniform01() * static_cast<double>(i))]);
  // Unused table entries hold -1: a backend that reads past a sequence's last block fails.
  c.block_table.assign(s.num_seqs * s.max_blocks_per_seq, -1);
  std::size_t next = 0;
  for (std::uint64_t q = 0; q < spec.seqs; ++q) {
    const auto len = 1 + static_cast<std::uint64_t>(rng.uniform01() * static_cast<double>(spec.max_context));
    for (std::uint64_t j = 0; j < (len + s.block_size - 1) / s.block_size; ++j)
      c.block_table[q * s.max_blocks_per_seq + j] = pool[next++];
    for (std::uint64_t t = len - std::min(len, spec.queries); t < len; ++t) {
      c.seq_ids.push_back(static_cast<std::int32_t>(q));
      c.positions.push_back(static_cast<std::int32_t>(t));
    }
  }
  s.rows = c.seq_ids.size();
  const std::uint64_t cache = s.num_blocks * s.block_size * s.kv_heads * s.head_dim;
  c.q = random_values(rng, d, s.rows * s.q_row_stride, -2.0f, 2.0f);
  c.k_cache = random_values(rng, d, cache, -2.0f, 2.0f);
  c.v_cache = random_values(rng, d, cache, -2.0f, 2.0f);
  return c;
}

CheckResult check_paged_attention(const Backend& b, DType d, const AttentionSpec& spec, std::uint64_t seed) {
  if (!b.declares(Op::kPagedAttention) || !b.declares(d)) return {};
  const AttentionCase c = make_attention_case(d, spec, seed);
  const AttentionShape& s = c.shape;
  const auto eq = encode(d, c.q), ek = encode(d, c.k_cache), ev = encode(d, c.v_cache);
  const std::uint64_t n = s.rows * s.q_heads * s.head_dim;
  std::vector<std::uint8_t> out = encode(d, std::vector<float>(static_cast<std::size_t>(n), 7.0f));
  AttentionHostData in{eq.data(), ek.data(), ev.data(), c.block_table.data(), c.seq_ids.data(), c.positions.data()};
  Status st = paged_attention_host(b, d, s, in, out.data());
  return finish(std::move(st), d, out, n,
                reference_paged_attention(s, c.q, c.k_cache, c.v_cache, c.block_table, c.seq_ids, c.positions));
}

}  // namespace gpulab::hal
