// What the P11 licence allows the platform to do, re-evaluated at start and
// every minute through licensing::check_license (the LicenseGate's check).
//
//   VALID       admit jobs whose kind's feature is licensed, up to max_gpus devices in use
//   GRACE       the same, plus a warning line and gpulab_platform_license_state{state="GRACE"}
//   EXPIRED     admit no new jobs (HTTP 403); running jobs finish
//   BAD_SIGNATURE / HW_MISMATCH / CLOCK_ROLLBACK / NOT_YET_VALID
//               refuse to start, with the licence's own message
//
// Without --license the platform is the community edition: training and
// matmul only, at most kCommunityDevices devices in use at once.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>

#include "platform/job_spec.hpp"

namespace platform {

inline constexpr int kCommunityDevices = 8;

struct LicenceOptions {
  std::filesystem::path license_file;  // empty: community edition
  std::filesystem::path public_key_file;
  std::filesystem::path state_file;  // where the rollback guard keeps the last-seen time
  std::function<std::int64_t()> clock;  // Unix seconds; default: the system clock
};

struct LicenceStatus {
  std::string state = "COMMUNITY";  // COMMUNITY, VALID, GRACE, EXPIRED, ...
  std::string message;
  std::string customer;
  int max_devices = kCommunityDevices;
  std::int64_t days_left = -1;  // -1: no expiry (community)
  bool admits_new_jobs = true;
  std::vector<std::string> features{"training"};  // the community edition trains; serving needs a licence
};

class LicencePolicy {
 public:
  // Evaluates once; throws gpulab::UsageError with the licence's message when
  // the platform must not start (bad signature, wrong machine, clock rollback).
  explicit LicencePolicy(LicenceOptions options);

  // Re-reads and re-evaluates the licence file (the minute tick). A licence
  // that turned bad while running stops admission rather than the process.
  void refresh();
  [[nodiscard]] const LicenceStatus& status() const { return status_; }

  // Empty when a job of this kind may be admitted now; else the reason for a 403.
  [[nodiscard]] std::string admission_refusal(JobKind kind) const;

 private:
  LicenceStatus evaluate(bool at_start) const;
  LicenceOptions options_;
  LicenceStatus status_;
};

// Empty when `want` more devices fit under the licence's device cap with
// `in_use` already held (cap < 0: no cap); else why the job waits, in the
// words of the native scheduler's pending reason, so a job reads the same
// whichever executor holds it back.
std::string device_cap_refusal(int cap, int in_use, int want);

// The licence feature a job kind needs ("training", "serving"); matmul needs none.
std::optional<std::string> feature_for(JobKind kind);

}  // namespace platform
