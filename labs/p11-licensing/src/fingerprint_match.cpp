#include "licensing/fingerprint_match.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace licensing {

MatchResult match_fingerprint(const std::vector<HwComponent>& licensed,
                              const std::vector<HwComponent>& here, std::size_t max_changed) {
  MatchResult r;
  r.licensed = licensed.size();
  r.max_changed = max_changed;
  for (const auto& c : licensed) {
    if (std::find(here.begin(), here.end(), c) == here.end()) r.missing.push_back(c);
  }
  return r;
}

std::string MatchResult::explain() const {
  std::vector<std::string> kinds;
  for (const auto& c : missing) kinds.push_back(c.kind);
  const std::string which = kinds.empty() ? "" : fmt::format(" ({})", fmt::join(kinds, ", "));
  return fmt::format("{} of {} components changed{}; the licence allows {}", changed(), licensed,
                     which, max_changed);
}

std::string check_tolerance(std::size_t n, std::size_t max_changed) {
  if (n == 0) return "the fingerprint has no components";
  if (max_changed >= n - max_changed) {
    return fmt::format(
        "--max-changed {} is too loose for {} components: more than half must still match "
        "(use at most {})",
        max_changed, n, (n - 1) / 2);
  }
  return "";
}

}  // namespace licensing
