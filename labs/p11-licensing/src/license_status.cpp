#include "licensing/license_status.hpp"

#include <fmt/format.h>

#include "antitamper/protect.h"

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
    case LicenseState::kRevoked: return "REVOKED";
    case LicenseState::kTampered: return "TAMPERED";
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
    case LicenseState::kRevoked: return 16;
    case LicenseState::kTampered: return 17;
  }
  return 1;
}

// The decisions live in the anti-tamper lab's protected section, so a patched
// byte in them is what GateOptions::anti_tamper's self-hash sees (tamper_guard.hpp).
AT_PROTECTED bool state_permits_use(LicenseState s) { return s == LicenseState::kValid || s == LicenseState::kGrace; }

namespace {
std::string days(std::int64_t n) { return fmt::format("{} day{}", n, n == 1 ? "" : "s"); }

// Everything after the signature: the clock, the hardware, the dates.
AT_PROTECTED Evaluation evaluate_terms(const SignedLicense& lic, const Fingerprint& here, std::int64_t now,
                          const std::optional<std::string>& rollback_problem) {
  const License& l = lic.license;
  Evaluation e;
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

Evaluation bad_signature(std::string message) {
  Evaluation e;
  e.state = LicenseState::kBadSignature;
  e.message = std::move(message);
  return e;
}

constexpr std::string_view kEdited = "signature does not match the contents (edited after signing?)";

}  // namespace

AT_PROTECTED Evaluation evaluate(const SignedLicense& lic, const PublicKey& vendor, const Fingerprint& here,
                    std::int64_t now, const std::optional<std::string>& rollback_problem) {
  switch (check_signature(lic, vendor)) {
    case SignatureCheck::kValid: break;
    case SignatureCheck::kWrongKey:
      return bad_signature(
          fmt::format("signed by key {}, not by the trusted vendor key {}", lic.license.key_id, vendor.key_id()));
    case SignatureCheck::kInvalid: return bad_signature(std::string(kEdited));
  }
  return evaluate_terms(lic, here, now, rollback_problem);
}

AT_PROTECTED Evaluation evaluate(const SignedLicense& lic, const Keyring& trusted, const Revocations* revoked, const Fingerprint& here,
                    std::int64_t now, const std::optional<std::string>& rollback_problem) {
  const License& l = lic.license;
  const TrustedKey* key = trusted.find(l.key_id);
  if (key == nullptr) {
    return bad_signature(trusted.keys().size() == 1
                             ? fmt::format("signed by key {}, not by the trusted vendor key {}", l.key_id, trusted.ids())
                             : fmt::format("signed by key {}, not by any trusted vendor key ({})", l.key_id, trusted.ids()));
  }
  if (!key->key.verify(lic.payload, lic.signature)) return bad_signature(std::string(kEdited));
  if (!key->trusted_on(l.issued)) {
    return bad_signature(fmt::format("issued {} by key {}, which is trusted only {} (a retired key)",
                                     format_date(l.issued), key->id, key->window()));
  }
  if (revoked != nullptr && (revoked->revokes_key(key->id) || revoked->revokes_licence(l.id))) {
    Evaluation e;
    e.state = LicenseState::kRevoked;
    e.message = revoked->revokes_licence(l.id)
                    ? fmt::format("licence {} is revoked (revocation list {} of {})", l.id, revoked->serial,
                                  format_date(revoked->issued))
                    : fmt::format("its signing key {} is revoked (revocation list {} of {})", key->id, revoked->serial,
                                  format_date(revoked->issued));
    return e;
  }
  return evaluate_terms(lic, here, now, rollback_problem);
}

}  // namespace licensing
