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
};
inline constexpr Op kAllOps[] = {Op::kBuffer, Op::kMatmul, Op::kSoftmax};

std::string_view name_of(Op op);  // "buffer", "matmul", "softmax"
std::optional<Op> parse_op(std::string_view s);
// Buffer copies move bytes, whatever the dtype: the matrix has one buffer column.
constexpr bool op_has_dtype(Op op) {
  return op != Op::kBuffer;
}

// matmul: m x n x k.  softmax: m rows x n cols.  buffer: m bytes at offset n.
struct Shape {
  std::uint64_t m = 0, n = 0, k = 0;
  std::string why;  // what the shape is for: "1x1", "prime", "tall-skinny", ...
  friend bool operator==(const Shape& a, const Shape& b) {
    return a.m == b.m && a.n == b.n && a.k == b.k;
  }
};
std::string label(Op op, const Shape& s);  // "7x13x5", "3x257", "4099B@13"

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
