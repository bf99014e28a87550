// licensectl's attestation subcommands (customer: attest-enroll; vendor:
// attest-challenge) and the flags they add to activation
// (activate-request --challenge/--tcti, sign-activation --attest-policy/--challenge/
// --require-ek-certified). The flow is in attestation.hpp; the EK-certified
// enrolment that replaces attest-enroll's trust on first use is ek_commands.hpp.
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>

#include "licensing/activation.hpp"
#include "licensing/civil_date.hpp"
#include "licensing/ed25519.hpp"

namespace licensing {

// activate-request's attestation: a challenge file to answer, on this TPM.
struct QuoteSource {
  std::string challenge_file;  // empty: a plain request without a quote
  std::string tcti;
};
// Sets the request's nonce to the challenge's and attaches a quote; does
// nothing when no challenge was given.
void attach_quote(ActivationRequest& request, const QuoteSource& source);

// sign-activation's attestation: the policy and the vendor's copy of the challenge.
struct QuoteCheck {
  std::string policy_file;  // empty: no quote required
  std::string challenge_file;
  bool require_ek_certified = false;  // refuse a policy whose AK is trusted on first use
};
// Throws gpulab::UsageError with the reason when the request does not prove
// the policy's state, or the policy's ek-certified label is not signed by
// `vendor` (check_policy_trust); does nothing when no policy was given.
void check_quote(const ActivationRequest& request, const QuoteCheck& check,
                 const PublicKey& vendor);
// After the activation is written: the challenge is used up.
void consume_challenge(const QuoteCheck& check);

class AttestCommands {
 public:
  explicit AttestCommands(CLI::App& app);
  // The exit code of the subcommand given, or nullopt when none of these was.
  [[nodiscard]] std::optional<int> run(Date today, bool json) const;

 private:
  CLI::App* enroll_ = nullptr;
  CLI::App* challenge_ = nullptr;
  std::string license_, pcrs_, tcti_, policy_, out_;
};

}  // namespace licensing
