// MIG geometry of an 80 GB A100/H100: 7 compute slices and 8 memory slices.
// A profile takes a fixed number of each and may start only at certain
// memory slices; instances on one GPU may not overlap. This is why a 3g
// instance costs more 1g instances than its "3" suggests.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace device_plugin {

struct MigProfile {
  std::string_view name;     // "<compute>g.<memory>gb"
  int compute_slices;
  int memory_slices;
  std::vector<int> starts;   // memory slices where an instance may begin
  int memory_gb;
};

// 1g.10gb, 2g.20gb, 3g.40gb, 4g.40gb, 7g.80gb.
const std::vector<MigProfile>& mig_profiles();
const MigProfile* find_profile(std::string_view name);

struct MigInstance {
  const MigProfile* profile;
  int start;  // first memory slice; also the GPU-instance id we report
};

class MigGpu {
 public:
  static constexpr int kComputeSlices = 7;
  static constexpr int kMemorySlices = 8;

  [[nodiscard]] bool can_place(const MigProfile& p, int start) const;
  bool place(const MigProfile& p, int start);  // false (and no change) if it cannot
  bool place_anywhere(const MigProfile& p);    // at the lowest allowed start
  bool remove(int start);
  // As many instances of `p` as fit together now, lowest starts first
  // (greedy is optimal here: a profile's instances all have the same size).
  [[nodiscard]] std::vector<int> packing(const MigProfile& p) const;
  [[nodiscard]] const std::vector<MigInstance>& instances() const { return instances_; }

 private:
  std::uint32_t memory_used_ = 0;  // a bit per memory slice
  int compute_used_ = 0;
  std::vector<MigInstance> instances_;
};

}  // namespace device_plugin
