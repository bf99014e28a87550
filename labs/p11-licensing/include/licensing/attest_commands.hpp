// licensectl's attestation subcommands (customer: attest-enroll; vendor:
// attest-challenge) and the two flags they add to activation
// (activate-request --challenge/--tcti, sign-activation --attest-policy/--challenge).
// The flow is in attestation.hpp.
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>

#include "licensing/activation.hpp"
#include "licensing/civil_date.hpp"

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
};
// Throws gpulab::UsageError with the reason when the request does not prove
// the policy's state; does nothing when no policy was given.
void check_quote(const ActivationRequest& request, const QuoteCheck& check);
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
  std::string license_, pcrs_, tcti_, policy_, out_, ek_ca_;
};

}  // namespace licensing
