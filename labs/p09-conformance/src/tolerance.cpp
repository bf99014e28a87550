#include "conformance/tolerance.hpp"

#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <stdexcept>

namespace conformance {

ToleranceRule rule_for(DType t) {
  ToleranceRule r;
  r.output_ulps = 1.0;
  r.reduce_unit = 0x1p-24;  // every dtype accumulates in binary32 or wider (ABI contract)
  r.flush_below = format_of(t).min_normal;
  return r;
}

std::string describe_rule(DType t) {
  const ToleranceRule r = rule_for(t);
  return fmt::format("{:g} ulp + n*2^{}*sum|terms|, flush below {:.2g}", r.output_ulps,
                     std::ilogb(r.reduce_unit), r.flush_below);
}

double element_bound(DType t, double exact, double reduce_terms, double reduce_magnitude) {
  const ToleranceRule r = rule_for(t);
  const double reduce = reduce_terms * r.reduce_unit * reduce_magnitude;
  // The ulp is taken where the result can land: the reduction may push the
  // computed value into the next binade before it is rounded.
  const double where = std::fabs(exact) + reduce;
  double bound = r.output_ulps * ulp(t, where) + reduce;
  if (std::fabs(exact) < r.flush_below) bound = std::max(bound, r.flush_below);
  return bound;
}

CheckResult check_elements(DType t, std::span<const double> got, std::span<const double> exact,
                           std::span<const double> bound) {
  if (got.size() != exact.size() || bound.size() != exact.size())
    throw std::invalid_argument("check_elements: sizes differ");
  CheckResult r;
  r.elements = got.size();
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double expected = round_to(t, exact[i]);
    const double err = std::fabs(got[i] - expected);
    double ratio = 0;
    bool bad = false;
    if (std::isnan(got[i]) || std::isinf(got[i])) {
      // Inputs are chosen so that no result overflows: a NaN or infinity is always wrong.
      ratio = std::numeric_limits<double>::infinity();
      bad = true;
    } else if (bound[i] == 0) {
      bad = err != 0;
      ratio = bad ? std::numeric_limits<double>::infinity() : 0.0;
    } else {
      ratio = err / bound[i];
      bad = err > bound[i];
    }
    if (bad) ++r.bad;
    if (bad && (!r.worst || ratio > r.worst_ratio))
      r.worst = Mismatch{i, got[i], expected, exact[i], bound[i]};
    if (ratio > r.worst_ratio) r.worst_ratio = ratio;
  }
  return r;
}

}  // namespace conformance
