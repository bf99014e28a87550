#include "kernels/tolerance.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <cstring>

namespace kernels {

bool close_enough(float got, float want, const Tolerance& tol) {
  if (!std::isfinite(got) || !std::isfinite(want)) return got == want;  // NaN never equals itself
  const double g = got, w = want;
  return std::abs(g - w) <= tol.rtol * std::abs(w) + tol.atol;
}

CloseReport check_close(std::span<const float> got, std::span<const float> want,
                        const Tolerance& tol) {
  CloseReport r;
  if (got.size() != want.size()) {
    r.checked = std::max(got.size(), want.size());
    r.mismatches = r.checked;
    return r;
  }
  r.checked = got.size();
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (!close_enough(got[i], want[i], tol)) {
      if (r.mismatches++ == 0) r.first_bad = i;
    }
    if (std::isfinite(got[i]) && std::isfinite(want[i]) && want[i] != 0.0f) {
      r.max_rel_error =
          std::max(r.max_rel_error, std::abs(double{got[i]} - want[i]) / std::abs(double{want[i]}));
    }
  }
  return r;
}

std::string describe(const CloseReport& r, std::span<const float> got,
                     std::span<const float> want) {
  if (r.ok()) return "PASS";
  if (r.checked == 0) return "FAIL: nothing was checked";
  if (got.size() != want.size())
    return fmt::format("FAIL: {} results for {} expected", got.size(), want.size());
  return fmt::format("FAIL: {} of {} differ (first at [{}]: got {}, want {})", r.mismatches,
                     r.checked, r.first_bad, got[r.first_bad], want[r.first_bad]);
}

std::size_t canary_overwrites(std::span<const float> region, float canary) {
  // Compare bits, so a canary of NaN would also work.
  return static_cast<std::size_t>(std::count_if(region.begin(), region.end(), [canary](float v) {
    return std::memcmp(&v, &canary, sizeof v) != 0;
  }));
}

}  // namespace kernels
