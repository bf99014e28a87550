// The reconvergence stack: how one PC serves 32 lanes that disagree.
//
// A divergent BRZ pushes an entry and runs the fall-through lanes first. When
// they reach the join (a RECONV), the taken lanes run from the branch target;
// when those reach the join too, the entry pops and the saved mask returns.
// This is the pre-Volta SSY/SYNC discipline; Volta's per-thread PCs change the
// architecture, not the cost: the two paths still issue one after the other.
#pragma once

#include <cstdint>
#include <vector>

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

class MaskStack {
 public:
  void push(const StackEntry& e) {
    entries_.push_back(e);
    if (static_cast<int>(entries_.size()) > max_depth_) max_depth_ = static_cast<int>(entries_.size());
  }
  void pop() { entries_.pop_back(); }
  [[nodiscard]] StackEntry& top() { return entries_.back(); }
  [[nodiscard]] const StackEntry& top() const { return entries_.back(); }
  [[nodiscard]] bool empty() const { return entries_.empty(); }
  [[nodiscard]] int depth() const { return static_cast<int>(entries_.size()); }
  [[nodiscard]] int max_depth() const { return max_depth_; }

 private:
  std::vector<StackEntry> entries_;
  int max_depth_ = 0;
};

}  // namespace simt
