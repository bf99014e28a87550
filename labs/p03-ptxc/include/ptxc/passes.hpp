// The optimisation passes, each in its own file and each usable alone (the
// tests run them one at a time). Every pass returns how many instructions it
// changed, so a caller can show what each one bought.
//
// Order at -O1: fold -> cse -> fma -> dce. Folding first turns constant
// subtrees into single constants CSE can merge; CSE before contraction so a
// shared product is seen as shared (and then not contracted); DCE last sweeps
// up what the others orphaned.
#pragma once

#include "ptxc/ir.hpp"

namespace ptxc {

// Evaluates instructions whose operands are all constants, in f32 with the
// same operations the hardware uses (so 0.1f*3 folds to what the GPU would
// compute, not to the double result). No algebraic identities: x + 0.0 is
// not x when x is -0.0.
int fold_constants(Function& fn);

// Merges instructions that compute the same value: same op, same operands
// (commutative ones in canonical order), same constant or parameter. A load
// is only merged with an earlier load of the same address when no store came
// between them, because any two pointers may alias.
int eliminate_common_subexpressions(Function& fn);

// a*b + c (either order) -> fma(a, b, c) when the product has no other use:
// one instruction and one rounding instead of two. A product that is used
// twice is left alone, as contracting it would add work, not remove it.
int contract_fma(Function& fn);

// Removes every instruction no store depends on, and renumbers the rest.
int eliminate_dead_code(Function& fn);

struct PassOptions {
  bool fold = true;
  bool cse = true;
  bool fma = true;
  bool dce = true;
  static PassOptions none() { return {false, false, false, false}; }
};

struct PassStats {
  int folded = 0, merged = 0, contracted = 0, removed = 0;
};

PassStats optimize(Function& fn, const PassOptions& opts);

}  // namespace ptxc
