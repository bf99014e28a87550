#include "device_plugin/mig.hpp"

#include <algorithm>

namespace device_plugin {

const std::vector<MigProfile>& mig_profiles() {
  // NVIDIA MIG user guide, A100/H100 80GB: (compute, memory slices) and start positions.
  static const std::vector<MigProfile> kProfiles{
      {"1g.10gb", 1, 1, {0, 1, 2, 3, 4, 5, 6}, 10},
      {"2g.20gb", 2, 2, {0, 2, 4}, 20},
      {"3g.40gb", 3, 4, {0, 4}, 40},
      {"4g.40gb", 4, 4, {0}, 40},
      {"7g.80gb", 7, 8, {0}, 80},
  };
  return kProfiles;
}

const MigProfile* find_profile(std::string_view name) {
  for (const MigProfile& p : mig_profiles()) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

bool MigGpu::can_place(const MigProfile& p, int start) const {
  if (std::find(p.starts.begin(), p.starts.end(), start) == p.starts.end()) return false;
  if (compute_used_ + p.compute_slices > kComputeSlices) return false;
  const std::uint32_t span = ((1u << p.memory_slices) - 1) << start;
  return (memory_used_ & span) == 0;
}

bool MigGpu::place(const MigProfile& p, int start) {
  if (!can_place(p, start)) return false;
  memory_used_ |= ((1u << p.memory_slices) - 1) << start;
  compute_used_ += p.compute_slices;
  instances_.push_back({&p, start});
  return true;
}

bool MigGpu::place_anywhere(const MigProfile& p) {
  for (int s : p.starts) {
    if (place(p, s)) return true;
  }
  return false;
}

bool MigGpu::remove(int start) {
  const auto it = std::find_if(instances_.begin(), instances_.end(),
                               [start](const MigInstance& i) { return i.start == start; });
  if (it == instances_.end()) return false;
  memory_used_ &= ~(((1u << it->profile->memory_slices) - 1) << start);
  compute_used_ -= it->profile->compute_slices;
  instances_.erase(it);
  return true;
}

std::vector<int> MigGpu::packing(const MigProfile& p) const {
  MigGpu trial = *this;
  std::vector<int> out;
  for (int s : p.starts) {
    if (trial.place(p, s)) out.push_back(s);
  }
  return out;
}

}  // namespace device_plugin
