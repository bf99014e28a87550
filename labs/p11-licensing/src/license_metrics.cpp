#include "licensing/license_metrics.hpp"

#include <array>

namespace licensing {
namespace {

constexpr std::string_view kUnreadable = "UNREADABLE";
constexpr std::array kStates = {
    LicenseState::kValid,         LicenseState::kGrace,        LicenseState::kExpired,
    LicenseState::kNotYetValid,   LicenseState::kBadSignature, LicenseState::kHwMismatch,
    LicenseState::kClockRollback, LicenseState::kRevoked,      LicenseState::kTampered};

void add_state(gpulab::prom::Exposition& e, const std::string& file, std::string_view current,
               std::int64_t now) {
  auto& f = e.gauge(
      "gpulab_license_state",
      "1 for the licence's current state (licensectl status), 0 for the others; UNREADABLE: the "
      "licence or key file could not be read or parsed.");
  for (const LicenseState s : kStates) {
    f.set({{"license_file", file}, {"state", std::string(state_name(s))}},
          state_name(s) == current ? 1 : 0);
  }
  f.set({{"license_file", file}, {"state", std::string(kUnreadable)}},
        current == kUnreadable ? 1 : 0);
  e.gauge("gpulab_license_check_timestamp_seconds",
          "When licensectl last evaluated the licence (Unix seconds).")
      .set({{"license_file", file}}, static_cast<double>(now));
}

}  // namespace

gpulab::prom::Exposition license_metrics(const std::string& license_file,
                                         const LicenseCheck& check) {
  const License& l = check.license.license;
  const Evaluation& e = check.evaluation;
  gpulab::prom::Exposition out;
  add_state(out, license_file, state_name(e.state), check.now);
  const gpulab::prom::Labels labels{{"license_file", license_file}};
  const std::int64_t expiry = start_of(Date{l.expires.day + 1});
  out.gauge("gpulab_license_expiry_timestamp_seconds",
            "End of the licence's last valid day (Unix seconds); grace, if any, starts here.")
      .set(labels, static_cast<double>(expiry));
  out.gauge("gpulab_license_grace_end_timestamp_seconds",
            "End of the licence's grace period (Unix seconds); from here on it is EXPIRED.")
      .set(labels,
           static_cast<double>(expiry + static_cast<std::int64_t>(l.grace_days) * kSecondsPerDay));
  // In seconds, the base unit promtool's lint asks for, measured from the check.
  const std::int64_t grace_end = expiry + static_cast<std::int64_t>(l.grace_days) * kSecondsPerDay;
  const bool valid = e.state == LicenseState::kValid;
  const bool grace = e.state == LicenseState::kGrace;
  out.gauge("gpulab_license_validity_remaining_seconds",
            "Time from the check to the end of the last valid day; 0 unless VALID.")
      .set(labels, valid ? static_cast<double>(expiry - check.now) : 0);
  out.gauge("gpulab_license_grace_remaining_seconds",
            "Grace time left at the check: all of it while VALID, the rest while GRACE, else 0.")
      .set(labels, valid   ? static_cast<double>(grace_end - expiry)
                   : grace ? static_cast<double>(grace_end - check.now)
                           : 0);
  out.gauge("gpulab_license_max_gpus", "GPUs the licence allows (0 unless it permits use).")
      .set(labels, state_permits_use(e.state) ? l.max_gpus : 0);
  return out;
}

gpulab::prom::Exposition unreadable_license_metrics(const std::string& license_file,
                                                    std::int64_t now) {
  gpulab::prom::Exposition out;
  add_state(out, license_file, kUnreadable, now);
  return out;
}

}  // namespace licensing
