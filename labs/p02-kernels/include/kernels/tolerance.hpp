// Elementwise verification with a relative tolerance. GPU results differ from
// the CPU's in the last bits (FMA contraction, summation order), so `==` is the
// wrong test; |got - want| <= rtol * |want| + atol is the right one.
#pragma once

#include <cstddef>
#include <span>
#include <string>

namespace kernels {

struct Tolerance {
  double rtol = 1e-3;  // the curriculum's harness tolerance
  double atol = 1e-6;  // keeps expected values of exactly 0 from demanding bit equality
};

struct CloseReport {
  std::size_t checked = 0;
  std::size_t mismatches = 0;  // NaN and Inf count as mismatches unless they match exactly
  std::size_t first_bad = 0;   // valid when mismatches > 0
  double max_rel_error = 0;    // over all finite elements
  [[nodiscard]] bool ok() const { return checked > 0 && mismatches == 0; }
};

bool close_enough(float got, float want, const Tolerance& tol);
// Sizes must match (a size mismatch is reported as every element mismatching).
CloseReport check_close(std::span<const float> got, std::span<const float> want,
                        const Tolerance& tol = {});
// "PASS" or "FAIL: 12 of 1,048,576 differ (first at [i], got x, want y)".
std::string describe(const CloseReport& r, std::span<const float> got, std::span<const float> want);

// Elements of `region` that are not the canary value: what an unguarded tail wrote past the end.
std::size_t canary_overwrites(std::span<const float> region, float canary);

}  // namespace kernels
