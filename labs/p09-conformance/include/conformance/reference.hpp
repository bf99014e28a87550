// Inputs and expected results of one case. Inputs are drawn from the case's
// seed and rounded into the case's dtype, so the backend and the reference see
// the very same numbers; the reference is then computed in double, and each
// output element gets its own tolerance bound (tolerance.hpp).
#pragma once

#include <cstdint>
#include <vector>

#include "conformance/matrix.hpp"

namespace conformance {

struct CaseData {
  // matmul: {A (m*k), B (k*n)}; softmax: {in (m*n)}; buffer: {bytes (m) as 0..255}.
  std::vector<std::vector<double>> inputs;
  std::vector<double> exact;  // the double-precision result, one per output element
  std::vector<double> bound;  // allowed |got - round_to(dtype, exact)| per element
};

// Softmax rows are shifted by -100, 0 or +100 in turn: e^100 overflows binary32,
// so an implementation that skips the row-maximum subtraction returns inf/NaN.
inline constexpr double kSoftmaxRowShift = 100.0;

CaseData make_case_data(const Case& c);

// The three references on their own (double in, double out; row-major).
std::vector<double> reference_matmul(const std::vector<double>& a, const std::vector<double>& b,
                                     std::uint64_t m, std::uint64_t n, std::uint64_t k);
std::vector<double> reference_softmax(const std::vector<double>& in, std::uint64_t rows,
                                      std::uint64_t cols);

}  // namespace conformance
