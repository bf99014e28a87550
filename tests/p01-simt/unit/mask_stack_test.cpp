// The reconvergence stack has a fixed capacity (no allocation while a program
// runs): the deepest nesting a warp can reach must fit, and a push past the
// capacity must be refused rather than write out of bounds.
#include "simt/mask_stack.hpp"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "simt/assembler.hpp"
#include "simt/machine.hpp"

namespace simt {
namespace {

// Level k splits lane k off (it stores its id and jumps to its join) and sends
// lanes > k on to level k + 1 as the taken path, so level k's entry is still on
// the stack when level k + 1 splits: 31 nested entries, the most 32 lanes allow.
std::string deepest_nesting_source() {
  std::string src = "TID r0\n";
  for (int k = 0; k < kWarpSize; ++k) {
    src += "SLT r1, r0, " + std::to_string(k + 1) + "\n";
    src += "BRZ r1, T" + std::to_string(k) + ", J" + std::to_string(k) + "\n";
    src += "ST r0, r0\n";
    src += "JMP J" + std::to_string(k) + "\n";
    src += "T" + std::to_string(k) + ": ";
  }
  src += "RECONV\n";
  for (int k = kWarpSize - 1; k >= 0; --k) src += "J" + std::to_string(k) + ": RECONV\n";
  return src;
}

TEST(MaskStack, DeepestNestingFitsAndUnwinds) {
  const Program p = assemble(deepest_nesting_source(), "deepest.simt");
  const RunResult r = run(p);
  EXPECT_EQ(r.stats.max_stack_depth, kWarpSize - 1);
  EXPECT_TRUE(r.stats.stack_empty_at_exit);
  for (int lane = 0; lane < kWarpSize; ++lane)
    EXPECT_EQ(r.mem[static_cast<std::size_t>(lane)], lane) << lane;
}

TEST(MaskStack, PushPastCapacityIsRefused) {
  MaskStack s;
  for (int i = 0; i < MaskStack::kCapacity; ++i) s.push({0, 0, kFullMask, 1, 0, true});
  EXPECT_EQ(s.depth(), MaskStack::kCapacity);
  EXPECT_THROW(s.push({0, 0, kFullMask, 1, 0, true}), std::logic_error);
  EXPECT_EQ(s.depth(), MaskStack::kCapacity);
  s.pop();
  EXPECT_EQ(s.max_depth(), MaskStack::kCapacity);
}

}  // namespace
}  // namespace simt
