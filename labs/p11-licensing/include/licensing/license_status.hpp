// What a licence means on this machine at this instant. Pure: the clock
// reading, the fingerprint and the rollback finding are inputs, so every
// boundary (expiry day, last grace day) is tested without sleeping.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "licensing/fingerprint_match.hpp"
#include "licensing/keyring.hpp"
#include "licensing/license.hpp"
#include "licensing/revocation.hpp"

namespace licensing {

enum class LicenseState {
  kValid, kGrace, kExpired, kNotYetValid, kBadSignature, kHwMismatch, kClockRollback, kRevoked,
  kTampered  // GateOptions::anti_tamper: the program checking is not the one built (tamper_guard.hpp)
};

std::string_view state_name(LicenseState s);  // "VALID", "GRACE", ...
// licensectl status exit code: 0 VALID, 10 GRACE, 11 EXPIRED, 12 NOT_YET_VALID,
// 13 BAD_SIGNATURE, 14 HW_MISMATCH, 15 CLOCK_ROLLBACK, 16 REVOKED, 17 TAMPERED (2 stays "malformed input").
int state_exit_code(LicenseState s);
// Whether software may run (VALID or GRACE).
bool state_permits_use(LicenseState s);

struct Evaluation {
  LicenseState state = LicenseState::kBadSignature;
  std::string message;
  std::int64_t days_left = 0;        // VALID: until expiry; GRACE: until grace ends (today counts)
  std::optional<MatchResult> hw;     // for hardware-bound licences with a good signature
};

// Order of checks: signature, clock rollback, hardware, not-yet-valid, expiry/grace.
// `rollback_problem` comes from RollbackGuard::check (nullopt = clock is plausible).
Evaluation evaluate(const SignedLicense& lic, const PublicKey& vendor, const Fingerprint& here,
                    std::int64_t now, const std::optional<std::string>& rollback_problem);

// The same against a keyring: the signing key must be in it and trusted on
// the licence's issue date (a retired key's later licences are BAD_SIGNATURE),
// and, with a revocation list that verify_revocations accepted, a revoked
// licence or signing key is REVOKED. Then as above.
Evaluation evaluate(const SignedLicense& lic, const Keyring& trusted, const Revocations* revoked, const Fingerprint& here,
                    std::int64_t now, const std::optional<std::string>& rollback_problem);

}  // namespace licensing
