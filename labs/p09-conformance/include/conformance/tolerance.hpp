// What "correct" means for each dtype. A backend computes with inputs that are
// exact values of the dtype, accumulates in at least binary32 (the ABI's
// contract, gpulab_hal.h) and rounds the result once into the dtype. So the
// bound on |got - expected| for one output element has three parts:
//
//   output   one ulp of the dtype at the expected value: both got and the
//            expected value are roundings of nearby reals, each within half an ulp
//   reduce   the error a binary32 reduction may make: n * 2^-24 times the sum
//            of the magnitudes it added (the textbook recursive-summation bound;
//            blocked, pairwise and FMA orders all stay inside it)
//   flush    results smaller than the dtype's smallest normal may come back as
//            zero (flush-to-zero hardware, OpenCL's default for float)
//
// expected = round_to(dtype, exact) where `exact` is the same computation in
// double from the same inputs. The bound is per element and computed from the
// case's own inputs, so a long reduction gets room and a 1x1 gets almost none.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "conformance/dtype.hpp"

namespace conformance {

struct ToleranceRule {
  double output_ulps = 1.0;      // multiples of ulp(dtype, expected)
  double reduce_unit = 0x1p-24;  // unit roundoff of the accumulator (binary32)
  double flush_below = 0;        // |exact| below this may read as 0 (the dtype's min normal)
};
ToleranceRule rule_for(DType t);
// "1 ulp + n*2^-24*sum|terms| (flush < 6.1e-05)" — one line for the human output.
std::string describe_rule(DType t);

// The bound for one element: `exact` is the double result, `reduce_terms` the
// number of terms the reduction adds, `reduce_magnitude` the sum of their
// magnitudes (for matmul: sum_k |a_ik * b_kj|).
double element_bound(DType t, double exact, double reduce_terms, double reduce_magnitude);

struct Mismatch {
  std::size_t index = 0;
  double got = 0;
  double expected = 0;  // round_to(dtype, exact)
  double exact = 0;
  double bound = 0;
};

struct CheckResult {
  std::size_t elements = 0;
  std::size_t bad = 0;            // elements outside their bound (NaN counts as outside)
  double worst_ratio = 0;         // max |got - expected| / bound over all elements (inf for NaN)
  std::optional<Mismatch> worst;  // the element with worst_ratio, when bad > 0
  [[nodiscard]] bool pass() const { return bad == 0; }
};

// Compares a backend's decoded output with the expected values. `got`,
// `exact` and `bound` must have the same length (a wrong-sized output is the
// caller's FAIL, not this function's). A bound of 0 demands equality (buffers).
CheckResult check_elements(DType t, std::span<const double> got, std::span<const double> exact,
                           std::span<const double> bound);

}  // namespace conformance
