// The API other labs (the P07 gateway, the P09 HAL, the capstone) call:
// open a licence once, then ask whether a feature is licensed and how many
// GPUs may be used. Everything is local — there is no network code path in
// this library at all; the clock and the hardware fingerprint are injectable.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string_view>

#include "licensing/license_status.hpp"

namespace licensing {

using Clock = std::function<std::int64_t()>;  // Unix seconds
std::int64_t system_now();

struct GateOptions {
  std::filesystem::path license_file;
  std::filesystem::path public_key_file;  // a PEM public key, or a keyring (keyring.hpp)
  std::filesystem::path revocations_file;  // empty: none; else a signed list (revocation.hpp)
  std::filesystem::path state_file;  // empty: <license_file>.state
  Clock clock = system_now;
  // Fingerprint of this machine for a product; default: probe_host("/").
  std::function<Fingerprint(std::string_view product)> fingerprint;
  std::int64_t rollback_tolerance_s = 3600;
  // Ask the anti-tamper layers first (tamper_guard.hpp); any objection is TAMPERED.
  bool anti_tamper = false;
};

struct LicenseCheck {
  SignedLicense license;
  Evaluation evaluation;
  std::int64_t now = 0;
};

// Reads, verifies and evaluates; records the last-seen time unless the
// signature is bad or the clock was rolled back. Malformed input throws
// FormatError / gpulab::UsageError with the reason.
LicenseCheck check_license(const GateOptions& options);

class LicenseGate {
 public:
  explicit LicenseGate(const GateOptions& options) : check_(check_license(options)) {}

  [[nodiscard]] bool allows_use() const { return state_permits_use(check_.evaluation.state); }
  // False whenever the licence does not permit use at all.
  [[nodiscard]] bool has_feature(std::string_view feature) const {
    return allows_use() && check_.license.license.has_feature(feature);
  }
  // 0 whenever the licence does not permit use.
  [[nodiscard]] std::uint32_t max_gpus() const { return allows_use() ? check_.license.license.max_gpus : 0; }
  [[nodiscard]] const LicenseCheck& check() const { return check_; }

 private:
  LicenseCheck check_;
};

}  // namespace licensing
