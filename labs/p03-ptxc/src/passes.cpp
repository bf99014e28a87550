#include "ptxc/passes.hpp"

namespace ptxc {

PassStats optimize(Function& fn, const PassOptions& opts) {
  PassStats stats;
  if (opts.fold) stats.folded = fold_constants(fn);
  if (opts.cse) stats.merged = eliminate_common_subexpressions(fn);
  // Sweep before contraction so duplicates CSE orphaned do not count as
  // second uses of a product.
  if (opts.dce) stats.removed += eliminate_dead_code(fn);
  if (opts.fma) stats.contracted = contract_fma(fn);
  if (opts.dce) stats.removed += eliminate_dead_code(fn);
  return stats;
}

}  // namespace ptxc
