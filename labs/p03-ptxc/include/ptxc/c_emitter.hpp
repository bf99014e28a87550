// Backend 2: the same optimised IR as C. What the two backends share is the
// whole front and middle end (lexer, parser, sema, passes); what they do not
// is the index model (a grid of threads with a guard vs a loop to n) and the
// ABI (.param space and cvta vs C arguments). That split is the HAL boundary
// of phase 09 in miniature.
//
// Every kernel NAME becomes `void ptxc_NAME(float *p0, float p1, ..., int n)`
// plus a uniform entry `void ptxc_entry_NAME(void **args, int n)` where
// args[k] points at parameter k, so a host can call any kernel through dlsym
// without knowing its signature.
#pragma once

#include <string>
#include <vector>

#include "ptxc/ir.hpp"

namespace ptxc {

std::string emit_c(const std::vector<Function>& fns);

}  // namespace ptxc
