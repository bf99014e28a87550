// One correctness check of one backend: seeded random inputs, quantized to the
// dtype, run through the backend, compared with the binary64 host reference
// under the dtype's tolerance. What hal-demo's conformance pass and the tests
// use; hal-conformance builds its matrix from the same calls.
#pragma once

#include <cstdint>
#include <vector>

#include "hal/backend.hpp"
#include "hal/dtype.hpp"
#include "hal/status.hpp"

namespace gpulab::hal {

struct CheckResult {
  bool declared = false;  // the backend declares this op and dtype (else nothing ran: "n/a")
  bool pass = false;      // ran, returned OK, and every element is within tolerance
  double worst_ratio = 0;  // worst |error| / tolerance (<= 1 passes); infinity for NaN
  Status status;           // what the backend returned
};

// Inputs uniform in [-1, 1) for matmul and [-4, 4) for softmax, from gpulab::Rng(seed).
CheckResult check_matmul(const Backend& b, DType d, std::uint64_t m, std::uint64_t n, std::uint64_t k,
                         std::uint64_t seed);
CheckResult check_softmax(const Backend& b, DType d, std::uint64_t rows, std::uint64_t cols,
                          std::uint64_t seed);

// ---- ABI 2.2 decoder-layer ops -------------------------------------------
// Inputs in [-2, 2) (weights in [0.5, 1.5)); rope rotates the q and k parts of
// a fused row of (heads + 2) heads plus one padding element, at positions
// drawn from [0, max_position), with tables built like a model's (theta 1e4).
CheckResult check_rmsnorm(const Backend& b, DType d, std::uint64_t rows, std::uint64_t cols, std::uint64_t seed);
CheckResult check_rope(const Backend& b, DType d, std::uint64_t rows, std::uint64_t heads, std::uint64_t head_dim,
                       std::uint64_t seed);
CheckResult check_silu_mul(const Backend& b, DType d, std::uint64_t rows, std::uint64_t cols, std::uint64_t seed);

// A paged-attention batch as a serving engine builds one: `seqs` sequences of
// random lengths in [1, max_context], their blocks scattered over a pool with
// spare blocks (so physical != logical order), and the last `queries` tokens
// of each sequence (fewer when it is shorter) as query rows, taken from a
// fused QKV row (q_offset 0, row stride (q_heads + 2 kv_heads) x head_dim).
struct AttentionSpec {
  std::uint64_t seqs = 3, queries = 2;
  std::uint64_t q_heads = 4, kv_heads = 2, head_dim = 16;
  std::uint64_t block_size = 4, max_context = 19;
};
struct AttentionCase {
  AttentionShape shape;
  std::vector<float> q, k_cache, v_cache;  // values representable in the dtype
  std::vector<std::int32_t> block_table, seq_ids, positions;
};
// The layout make_attention_case uses for a spec (rows = 0: they depend on the
// drawn lengths): pool, block table width, fused-QKV row stride, 1/sqrt(head_dim).
AttentionShape attention_layout(const AttentionSpec& spec);
AttentionCase make_attention_case(DType d, const AttentionSpec& spec, std::uint64_t seed);
CheckResult check_paged_attention(const Backend& b, DType d, const AttentionSpec& spec, std::uint64_t seed);

}  // namespace gpulab::hal
