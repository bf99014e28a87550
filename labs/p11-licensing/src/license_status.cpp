#include "licensing/license_status.hpp"

#include <fmt/format.h>

namespace licensing {

std::string_view state_name(LicenseState s) {
  switch (s) {
    case LicenseState::kValid: return "VALID";
    case LicenseState::kGrace: return "GRACE";
    case LicenseState::kExpired: return "EXPIRED";
    case LicenseState::kNotYetValid: return "NOT_YET_VALID";
    case LicenseState::kBadSignature: return "BAD_SIGNATURE";
    case LicenseState::kHwMismatch: return "HW_MISMATCH";
    case LicenseState::kClockRollback: return "CLOCK_ROLLBACK";
  }
  return "UNKNOWN";
}

int state_exit_code(LicenseState s) {
  switch (s) {
    case LicenseState::kValid: return 0;
    case LicenseState::kGrace: return 10;
    case LicenseState::kExpired: return 11;
    case LicenseState::kNotYetValid: return 12;
    case LicenseState::kBadSignature: return 13;
    case LicenseState::kHwMismatch: return 14;
    case LicenseState::kClockRollback: return 15;
  }
  return 1;
}

bool state_permits_use(LicenseState s) { return s == LicenseState::kValid || s == LicenseState::kGrace; }

namespace {
std::string days(std::int64_t n) { return fmt::format("{} day{}", n, n == 1 ? "" : "s"); }
}  // namespace

Evaluation evaluate(const SignedLicense& lic, const PublicKey& vendor, const Fingerprint& here,
                    std::int64_t now, const std::optional<std::string>& rollback_problem) {
  const License& l = lic.license;
  Evaluation e;
  switch (check_signature(lic, vendor)) {
    case SignatureCheck::kValid: break;
    case SignatureCheck::kWrongKey:
      e.state = LicenseState::kBadSignature;
      e.message = fmt::format("signed by key {}, not by the trusted vendor key {}", l.key_id, vendor.key_id());
      return e;
    case SignatureCheck::kInvalid:
      e.state = LicenseState::kBadSignature;
      e.message = "signature does not match the contents (edited after signing?)";
      return e;
  }
  const Date today = date_of(now);
  if (rollback_problem) {
    e.state = LicenseState::kClockRollback;
    e.message = *rollback_problem;
    return e;
  }
  if (today < l.issued) {
    e.state = LicenseState::kClockRollback;
    e.message = fmt::format("system date {} is before the licence was issued ({})", format_date(today),
                            format_date(l.issued));
    return e;
  }
  if (!l.floating) {
    e.hw = match_fingerprint(l.hw, here.components, l.hw_max_changed);
    if (here.product != l.product || !e.hw->ok()) {
      e.state = LicenseState::kHwMismatch;
      e.message = here.product != l.product
                      ? fmt::format("fingerprint was taken for product '{}', not '{}'", here.product, l.product)
                      : "not this machine: " + e.hw->explain();
      return e;
    }
  }
  if (today < l.not_before) {
    e.state = LicenseState::kNotYetValid;
    e.days_left = l.not_before.day - today.day;
    e.message = fmt::format("valid from {} (in {})", format_date(l.not_before), days(e.days_left));
    return e;
  }
  if (today <= l.expires) {
    e.state = LicenseState::kValid;
    e.days_left = l.expires.day - today.day + 1;
    e.message = fmt::format("valid through {} ({} left)", format_date(l.expires), days(e.days_left));
    return e;
  }
  const Date grace_end{l.expires.day + static_cast<std::int64_t>(l.grace_days)};
  if (today <= grace_end) {
    e.state = LicenseState::kGrace;
    e.days_left = grace_end.day - today.day + 1;
    e.message = fmt::format("expired {}; grace period ends {} ({} left) - renew now",
                            format_date(l.expires), format_date(grace_end), days(e.days_left));
    return e;
  }
  e.state = LicenseState::kExpired;
  e.message = l.grace_days == 0
                  ? fmt::format("expired {}", format_date(l.expires))
                  : fmt::format("expired {}; grace period ended {}", format_date(l.expires), format_date(grace_end));
  return e;
}

}  // namespace licensing
