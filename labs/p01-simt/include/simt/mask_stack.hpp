// The reconvergence stack: how one PC serves 32 lanes that disagree.
//
// A divergent BRZ pushes an entry and runs the fall-through lanes first. When
// they reach the join (a RECONV), the taken lanes run from the branch target;
// when those reach the join too, the entry pops and the saved mask returns.
// This is the pre-Volta SSY/SYNC discipline; Volta's per-thread PCs change the
// architecture, not the cost: the two paths still issue one after the other.
#pragma once

#include <array>
#include <cstdint>
#include <stdexcept>

namespace simt {

using LaneMask = std::uint32_t;
inline constexpr int kWarpSize = 32;
inline constexpr LaneMask kFullMask = 0xFFFFFFFFu;

struct StackEntry {
  std::uint32_t join_pc;    // where both paths meet (a RECONV)
  std::uint32_t branch_pc;  // the BRZ that pushed this entry
  LaneMask saved_mask;      // restored when the entry pops
  LaneMask taken_mask;      // lanes still waiting to run the taken path
  std::uint32_t taken_pc;   // where the taken path starts
  bool taken_pending;       // the taken path has not run yet
};

// Fixed capacity, so pushing never allocates: every push splits the active
// mask into two non-empty parts and runs with one of them, so each entry's
// saved mask strictly contains the next one's and the active mask — at most
// 31 entries for 32 lanes. (The pitfall switches only pop early; they never
// push more.)
class MaskStack {
 public:
  static constexpr int kCapacity = kWarpSize;

  void push(const StackEntry& e) {
    if (depth_ == kCapacity) throw std::logic_error("mask stack deeper than the warp is wide");
    entries_[static_cast<std::size_t>(depth_++)] = e;
    if (depth_ > max_depth_) max_depth_ = depth_;
  }
  void pop() { --depth_; }
  [[nodiscard]] StackEntry& top() { return entries_[static_cast<std::size_t>(depth_ - 1)]; }
  [[nodiscard]] const StackEntry& top() const { return entries_[static_cast<std::size_t>(depth_ - 1)]; }
  [[nodiscard]] bool empty() const { return depth_ == 0; }
  [[nodiscard]] int depth() const { return depth_; }
  [[nodiscard]] int max_depth() const { return max_depth_; }

 private:
  // Left uninitialised: only entries below depth_ are ever read, and zeroing
  // 768 bytes per warp was a visible share of a short kernel's run.
  std::array<StackEntry, kCapacity> entries_;
  int depth_ = 0;
  int max_depth_ = 0;
};

}  // namespace simt
