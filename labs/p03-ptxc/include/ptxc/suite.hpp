// The built-in suite `ptxc` runs with no arguments: the curriculum's five
// kernels (saxpy, scale2, vadd, lerp, a multi-statement kernel) and one kernel
// per extension (min/max, constant folding, CSE, fused relu, sqrt).
#pragma once

#include <string_view>

namespace ptxc {

// One source file holding every suite kernel, in table order.
std::string_view builtin_suite_source();

}  // namespace ptxc
