// Fuzzy hardware binding. A licence records the n component hashes of the
// machine it was issued for and a tolerance k: it still matches while at most
// k of those n are missing from the machine now. Components that appear (a new
// NIC, an added GPU) never count against the licence; components that vanish
// (a NIC swap, a replaced disk) do. Issuing requires k < n - k — more than half
// of the recorded components must survive — so a licence cannot be carried to
// a different machine that merely shares the CPU model.
#pragma once

#include <string>
#include <vector>

#include "licensing/fingerprint.hpp"

namespace licensing {

struct MatchResult {
  std::size_t licensed = 0;          // n
  std::size_t max_changed = 0;       // k
  std::vector<HwComponent> missing;  // licensed components not found now
  [[nodiscard]] std::size_t changed() const { return missing.size(); }
  [[nodiscard]] bool ok() const { return changed() <= max_changed; }
  // "1 of 6 components changed (nic_mac); the licence allows 2"
  [[nodiscard]] std::string explain() const;
};

MatchResult match_fingerprint(const std::vector<HwComponent>& licensed,
                              const std::vector<HwComponent>& here, std::size_t max_changed);

// Empty when the tolerance is acceptable for n components; otherwise why not.
std::string check_tolerance(std::size_t n, std::size_t max_changed);

}  // namespace licensing
