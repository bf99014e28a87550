// Inputs and expected results of one case. Inputs are drawn from the case's
// seed and rounded into the case's dtype, so the backend and the reference see
// the very same numbers; the reference is then computed in double, and each
// output element gets its own tolerance bound (tolerance.hpp).
#pragma once

#include <cstdint>
#include <vector>

#include "conformance/matrix.hpp"
#include "hal/layer_ops.hpp"

namespace conformance {

// How one input travels to the backend: in the case's dtype (the default), as
// binary32 (rope's cos/sin tables), or as int32 (positions, block tables).
enum class InputKind : std::uint8_t { kDType, kF32, kInt32 };

struct CaseData {
  // matmul: {A (m*k), B (k*n)}; softmax: {in (m*n)}; buffer: {bytes (m) as 0..255};
  // rmsnorm: {in, weight}; rope: {x, positions, cos, sin}; silu_mul: {[gate|up] rows};
  // paged attention: {q, k_cache, v_cache, block_table, seq_ids, positions}.
  std::vector<std::vector<double>> inputs;
  std::vector<InputKind> kinds;  // parallel to inputs; empty = every input in the dtype
  std::vector<double> exact;  // the double-precision result, one per output element
  std::vector<double> bound;  // allowed |got - round_to(dtype, exact)| per element
};

// Softmax rows are shifted by -100, 0 or +100 in turn: e^100 overflows binary32,
// so an implementation that skips the row-maximum subtraction returns inf/NaN.
inline constexpr double kSoftmaxRowShift = 100.0;

CaseData make_case_data(const Case& c);

// The fixed parameters of the ABI 2.2 cases, shared by the reference and the
// HAL adapter so both describe the same call.
inline constexpr float kRmsNormEps = 1e-5f;
inline constexpr std::uint64_t kRopeMaxPosition = 32;
// rope: rows of a fused QKV (one q head, then the n rotated heads, then one
// v head and one padding element), so x_offset and the untouched tail are tested.
gpulab::hal::RopeShape rope_shape(const Case& c);
// paged attention: the layout of the case's spec with `rows` query rows.
gpulab::hal::AttentionShape attention_shape(const Case& c, std::uint64_t rows);

// The three references on their own (double in, double out; row-major).
std::vector<double> reference_matmul(const std::vector<double>& a, const std::vector<double>& b,
                                     std::uint64_t m, std::uint64_t n, std::uint64_t k);
std::vector<double> reference_softmax(const std::vector<double>& in, std::uint64_t rows,
                                      std::uint64_t cols);

}  // namespace conformance
