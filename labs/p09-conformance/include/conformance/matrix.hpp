// The test matrix: every operation of the HAL ABI x every dtype x a list of
// shapes chosen to break implementations — 1x1, zero-sized, prime sizes that
// defeat tiling, tall-and-skinny, long reductions. Each case carries its own
// inputs, generated from the seed and the case's identity, so one failing case
// can be rerun alone and gives the same numbers.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "conformance/dtype.hpp"

namespace conformance {

enum class Op : std::uint8_t {
  kBuffer,   // alloc, copy to the device at an offset, copy back: bit-exact
  kMatmul,   // C[m x n] = A[m x k] * B[k x n]
  kSoftmax,  // row-wise softmax of rows x cols (m x n)
  // HAL ABI 2.2, the decoder-layer ops (gpulab_hal.h defines each):
  kRmsNorm,         // rows x cols (m x n)
  kRope,            // m rows of fused QKV, n heads of head_dim k rotated in place
  kSiluMul,         // rows x cols (m x n) out of [gate | up] rows
  kPagedAttention,  // m sequences of up to n tokens, head_dim k; heads, blocks, queries below
};
inline constexpr Op kAllOps[] = {Op::kBuffer,  Op::kMatmul,  Op::kSoftmax,       Op::kRmsNorm,
                                 Op::kRope,    Op::kSiluMul, Op::kPagedAttention};

std::string_view name_of(Op op);  // "buffer", "matmul", "softmax", "rmsnorm", ..., "paged_attention"
std::optional<Op> parse_op(std::string_view s);
// Buffer copies move bytes, whatever the dtype: the matrix has one buffer column.
constexpr bool op_has_dtype(Op op) {
  return op != Op::kBuffer;
}

// matmul: m x n x k.  softmax, rmsnorm, silu_mul: m rows x n cols.  buffer: m
// bytes at offset n.  rope: m rows, n heads, head_dim k.  paged attention: m
// sequences, context up to n, head_dim k, and the four fields after `why`.
struct Shape {
  std::uint64_t m = 0, n = 0, k = 0;
  std::string why;  // what the shape is for: "1x1", "prime", "tall-skinny", ...
  std::uint64_t q_heads = 0, kv_heads = 0, block = 0, queries = 0;  // paged attention only
  friend bool operator==(const Shape& a, const Shape& b) {
    return a.m == b.m && a.n == b.n && a.k == b.k && a.q_heads == b.q_heads &&
           a.kv_heads == b.kv_heads && a.block == b.block && a.queries == b.queries;
  }
};
// "7x13x5", "3x257", "4099B@13", rope "5x4hx16", attention "3x19x16 h4/2 b4 q2".
std::string label(Op op, const Shape& s);

struct Case {
  Op op = Op::kMatmul;
  DType dtype = DType::kF32;  // kF32 for buffer cases (unused)
  Shape shape;
  std::uint64_t seed = 0;  // inputs come from this
};
// "matmul F16 7x13x5", "buffer 4099B@13".
std::string describe(const Case& c);
// "liar/F16/matmul" style identity of the capability a case tests.
std::string capability_id(std::string_view backend, Op op, DType dtype);

struct MatrixOptions {
  std::vector<Op> ops{std::begin(kAllOps), std::end(kAllOps)};
  std::vector<DType> dtypes{std::begin(kAllDTypes), std::end(kAllDTypes)};
  bool large = false;  // add the big shapes (seconds per slow backend)
  std::uint64_t seed = 1;
};

// The shapes of one op, small set first; `large` appends the big ones.
std::vector<Shape> shapes_for(Op op, bool large);
// Every case, in matrix order: op, then dtype, then shape. Buffer cases appear
// once (dtype F32), not once per dtype.
std::vector<Case> build_matrix(const MatrixOptions& opts);

// Largest m, n or k (matmul), rows or cols (softmax) of a case; the HAL's
// max_dim applies to these.
std::uint64_t largest_dim(const Case& c);

}  // namespace conformance
