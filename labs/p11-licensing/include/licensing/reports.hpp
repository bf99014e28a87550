// What each licensectl command does and how it prints: one result struct per
// command, produced by run_*() and rendered as the README's text by render()
// and as one JSON document by to_json(). licensectl_main.cpp only wires flags
// to these. Bad input throws gpulab::UsageError or FormatError naming the
// flag or the file.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "gpulab/json.hpp"
#include "licensing/activation.hpp"
#include "licensing/attest_commands.hpp"
#include "licensing/demo.hpp"
#include "licensing/license_gate.hpp"

namespace licensing {

// "--expires must be a YYYY-MM-DD date, got 'x'" for anything else.
Date date_arg(const std::string& s, std::string_view flag);
// --now: a date (taken at 12:00 UTC) or "@<unix seconds>"; empty = the system clock.
Clock clock_arg(const std::string& s);
// "b,a,b" -> {"a", "b"}: sorted, without duplicates.
std::vector<std::string> features_arg(const std::string& csv);
// The fingerprint of the machine whose tree is under `root`, for `product`.
Fingerprint host_fingerprint(const std::string& root, std::string_view product);
// Components allowed to change for n components: max_changed, or (n-1)/3 when it is < 0.
std::uint32_t tolerance_for(std::size_t n, int max_changed);

// ---- keygen ----
struct KeygenReport {
  std::string prefix;  // PREFIX.key and PREFIX.pub were written
  std::string key_id;
};
KeygenReport run_keygen(const std::string& prefix, bool force);
std::string render(const KeygenReport& r);
gpulab::Json to_json(const KeygenReport& r);

// ---- issue ----
struct IssueOptions {
  std::string key_file, customer, product = "gpulab-serve", features, not_before, expires, issued,
                                  fingerprint_file, out, id;
  std::uint32_t max_gpus = 1, grace_days = 14;
  int max_changed = -1;
  bool floating = false;
};
struct IssueReport {
  std::string out;
  License license;
  std::string key_id;
};
IssueReport run_issue(const IssueOptions& o, Date today);
std::string render(const IssueReport& r);
gpulab::Json to_json(const IssueReport& r);

// ---- sign-activation, activate-request: a request and where it went ----
struct RequestReport {
  std::string out;
  ActivationRequest request;
  bool attested = false;  // sign-activation verified the request's quote against a policy
};
// With a policy in `attest`, the request's TPM quote must prove the policy's state first.
RequestReport run_sign_activation(const std::string& request_file,
                                  const std::string& entitlement_file, const std::string& key_file,
                                  Date today, int max_changed, const std::string& out,
                                  const QuoteCheck& attest = {});
std::string render_sign_activation(const RequestReport& r);
gpulab::Json sign_activation_json(const RequestReport& r);
// Fingerprints the tree under `root`; with a challenge in `attest`, quotes the TPM too.
RequestReport run_activate_request(const std::string& entitlement_file, const std::string& root,
                                   Date today, const std::string& out,
                                   const QuoteSource& attest = {});
std::string render_activate_request(const RequestReport& r);
gpulab::Json activate_request_json(const RequestReport& r);

// ---- activate ----
struct ActivateReport {
  std::string out;
  SignedLicense license;
};
// Verifies the activation against the pending request and this machine,
// installs it at `out` and removes the request (one request, one activation).
ActivateReport run_activate(const std::string& activation_file, const std::string& request_file,
                            const std::string& public_key_file, const std::string& root,
                            const std::string& out);
std::string render(const ActivateReport& r);
gpulab::Json to_json(const ActivateReport& r);

// ---- status ----
struct StatusReport {
  std::string license_file;
  LicenseCheck check;
  [[nodiscard]] int exit_code() const { return state_exit_code(check.evaluation.state); }
};
std::string render(const StatusReport& r);
gpulab::Json to_json(const StatusReport& r);

// ---- demo ----
struct DemoReport {
  std::vector<DemoRow> rows;
  [[nodiscard]] std::size_t failed() const;
};
// Runs every scenario in a scratch directory under /tmp, removed afterwards.
DemoReport run_demo_report();
std::string render(const DemoReport& r);
gpulab::Json to_json(const DemoReport& r);

}  // namespace licensing
