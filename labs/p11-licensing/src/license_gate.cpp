#include "licensing/license_gate.hpp"

#include <chrono>

#include "licensing/host_probe.hpp"
#include "licensing/rollback_guard.hpp"
#include "licensing/secure_file.hpp"
#include "licensing/tamper_guard.hpp"

namespace licensing {

std::int64_t system_now() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

LicenseCheck check_license(const GateOptions& o) {
  LicenseCheck c;
  c.license = parse_license(read_file_limited(o.license_file, kMaxLicenseBytes));
  if (o.anti_tamper) {
    if (std::string why = tamper_problem(); !why.empty()) {
      // Nothing is recorded: a tampered program's reading of the clock is not believed either.
      c.now = o.clock();
      c.evaluation.state = LicenseState::kTampered;
      c.evaluation.message = std::move(why);
      return c;
    }
  }
  const Keyring trusted = Keyring::load(o.public_key_file);
  std::optional<Revocations> revoked;
  if (!o.revocations_file.empty()) {
    revoked = parse_revocations(read_file_limited(o.revocations_file, kMaxRevocationBytes));
    verify_revocations(*revoked, trusted);  // a list that does not verify is an error, not "nothing revoked"
  }
  const Fingerprint here = o.fingerprint ? o.fingerprint(c.license.license.product)
                                         : fingerprint_of(c.license.license.product, probe_host({}));
  c.now = o.clock();
  const RollbackGuard guard(o.state_file.empty() ? std::filesystem::path(o.license_file.string() + ".state")
                                                 : o.state_file,
                            o.rollback_tolerance_s);
  c.evaluation = evaluate(c.license, trusted, revoked ? &*revoked : nullptr, here, c.now, guard.check(c.license, c.now));
  const LicenseState s = c.evaluation.state;
  if (s != LicenseState::kBadSignature && s != LicenseState::kClockRollback) guard.record(c.license, c.now);
  return c;
}

}  // namespace licensing
