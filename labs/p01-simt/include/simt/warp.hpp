// A warp: 32 lanes with private registers, and one PC, one active mask and one
// reconvergence stack shared by all of them.
#pragma once

#include <array>
#include <bit>
#include <cstdint>

#include "simt/isa.hpp"
#include "simt/mask_stack.hpp"

namespace simt {

struct Warp {
  int id = 0;
  // Register-major: one register of all 32 lanes is contiguous, so an ALU
  // instruction is a loop the compiler can vectorize.
  std::array<std::array<std::int64_t, kWarpSize>, kNumRegisters> regs{};
  std::uint32_t pc = 0;
  LaneMask mask = kFullMask;
  MaskStack stack;
  std::uint64_t ready_cycle = 0;  // a stalled warp (after LD) is not eligible before this cycle
  std::uint64_t issues = 0;
  std::uint64_t loads = 0;

  [[nodiscard]] std::int64_t reg(int r, int lane) const {
    return regs[static_cast<std::size_t>(r)][static_cast<std::size_t>(lane)];
  }
  [[nodiscard]] int active_lanes() const { return std::popcount(mask); }
};

}  // namespace simt
