#pragma once
// The last line of a thin main: a report struct printed as the README's text or as one JSON
// document (--json), found by argument-dependent lookup as render(report) and
// to_json(report). A report with a pass() is a check: exit 1 when it failed.
#include <fmt/core.h>

#include "gpulab/errors.hpp"
#include "gpulab/json.hpp"

namespace gpulab {

template <class Report>
int emit_report(const Report& report, bool as_json) {
  if (as_json)
    print_json(to_json(report));
  else
    fmt::print("{}", render(report));
  if constexpr (requires { report.pass(); })
    return report.pass() ? kExitOk : kExitCheckFailed;
  else
    return kExitOk;
}

}  // namespace gpulab
