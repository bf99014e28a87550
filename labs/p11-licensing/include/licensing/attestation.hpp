// Activation that needs a TPM quote: the machine proves its measured state
// (PCR values), not only its identifiers, to the vendor.
//
//   customer, known-good state          vendor (offline signing host)
//   attest-enroll ── policy.txt ──USB──▶ keeps it: the AK to trust, golden PCR values
//                                        attest-challenge --policy → challenge.txt (nonce)
//   activate-request --challenge ◀──USB──
//     (TPM2_Quote over the policy's PCRs, the nonce as qualifying data)
//                  ── request.txt ──USB─▶ sign-activation --attest-policy --challenge
//                                         verifies the quote, then signs as before
//
// The nonce makes a quote answer one challenge; the vendor's copy of the
// challenge is consumed by a successful sign-activation, so neither an old
// quote nor an old challenge can be used twice. Enrolment is trust on first
// use: whoever enrols decides which AK and which state are "good" (no EK
// certificate chain; see the README).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "licensing/activation.hpp"
#include "licensing/civil_date.hpp"
#include "licensing/tpm_quote.hpp"

namespace licensing {

struct AttestPolicy {
  std::string license_id;
  std::string ak_sha256;  // ak_fingerprint() of the enrolled attestation key
  PcrSelection selection;
  std::vector<Bytes> golden;  // one 32-byte value per PCR of `selection`
};
std::string format_policy(const AttestPolicy& p);
AttestPolicy parse_policy(std::string_view text);  // throws FormatError

struct AttestChallenge {
  std::string license_id;
  std::string nonce;  // 32 lowercase hex digits (128 random bits)
  PcrSelection selection;
  Date issued;
};
std::string format_challenge(const AttestChallenge& c);
AttestChallenge parse_challenge(std::string_view text);  // throws FormatError

// A fresh nonce for the policy's licence and PCRs.
AttestChallenge make_challenge(const AttestPolicy& policy, Date today);

// The vendor's check of a request against its policy and its own copy of the
// challenge; throws gpulab::UsageError with a one-line reason.
void verify_attested_request(const ActivationRequest& request, const AttestPolicy& policy,
                             std::string_view policy_name, const AttestChallenge& challenge);

}  // namespace licensing
