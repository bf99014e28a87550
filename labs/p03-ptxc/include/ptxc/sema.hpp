// Stage 3: semantic checks on the AST. Reports (never throws) every error it
// finds: duplicate kernels, duplicate or reserved parameter names, undefined
// names, a pointer used as a value or a scalar indexed, a subscript other than
// `i`, unknown intrinsics and wrong arity. A program that passes is safe to
// lower: every name resolves and every type fits.
#pragma once

#include "ptxc/ast.hpp"

namespace ptxc {

// Names the language reserves: `i` (the thread's element) and `n` (the hidden
// element count the backends append as the last parameter).
inline constexpr std::string_view kIndexName = "i";
inline constexpr std::string_view kCountName = "n";

void check(const Program& program, Diagnostics& diags);

}  // namespace ptxc
