// The oracle of the differential test: the kernel's meaning computed straight
// from the AST, one element at a time, in f32 with one rounding per operation
// (no contraction). It shares nothing with lowering, the passes or either
// backend, so a bug there cannot hide in the reference too.
#pragma once

#include <vector>

#include "ptxc/ast.hpp"

namespace ptxc {

// Buffers and scalars are indexed like kernel.params (the slot of the other
// kind is ignored); buffers must hold at least n floats.
void evaluate_reference(const Kernel& kernel, std::vector<std::vector<float>>& buffers,
                        const std::vector<float>& scalars, int n);

}  // namespace ptxc
