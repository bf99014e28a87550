// EK-certified enrolment of an attestation key, as a file round trip across
// the air gap (the vendor never sees the TPM, the customer never decides):
//
//   customer (TPM)                           vendor (offline signing host, no TPM)
//   attest-ek-request ── ek-request.txt ──▶ attest-ek-challenge --ek-ca CA
//     EK certificate, AK public area          verifies the EK chain and the AK's
//     and name, PCRs and their values         area and name; tpm2_makecredential
//                                             -T none wraps a fresh secret
//   attest-ek-answer ◀── ek-challenge.txt ──   (keeps ek-pending.txt: a hash of it)
//     tpm2_activatecredential
//                    ── ek-answer.txt ─────▶ attest-ek-certify --pending --key
//                                             constant-time check, then writes the
//                                             signed ek-certified policy
//
// The secret never travels in clear towards the customer: only the TPM whose
// EK the certificate names can unwrap the credential, and only while an
// object with the AK's name is loaded. The vendor keeps sha256(secret) in its
// pending file, not the secret (a 256-bit random value: its hash cannot be
// searched, so even a leaked pending file answers nothing); the answer then
// carries the secret once, after which the pending file is consumed.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "licensing/attestation.hpp"
#include "licensing/civil_date.hpp"
#include "licensing/ek_trust.hpp"
#include "licensing/encoding.hpp"
#include "licensing/tpm_quote.hpp"

namespace licensing {

// A credential challenge must be answered within this many days of being made.
inline constexpr std::int64_t kEkChallengeMaxAgeDays = 30;
inline constexpr std::size_t kEkSecretBytes = 32;

// Step 1, customer → vendor: what the TPM says about itself, no decision made.
struct EkEnrolRequest {
  std::string license_id;
  Bytes ek_certificate;  // DER; carried as PEM lines
  Bytes ak_public;       // TPM2B_PUBLIC of the attestation key
  Bytes ak_name;         // the TPM's name for it (0x000b || sha256 of the area)
  PcrSelection selection;
  std::vector<Bytes> golden;  // the PCR values at enrolment, one per selected PCR
  Date requested;
};
// Ends with "digest: <sha256>" so a truncated transfer is caught.
std::string format_ek_request(const EkEnrolRequest& r);
EkEnrolRequest parse_ek_request(std::string_view text);  // throws FormatError

// Step 2, vendor → customer.
struct EkChallenge {
  std::string license_id;
  std::string challenge_id;  // 32 lowercase hex digits, random
  Bytes ak_name;             // the AK the credential is bound to
  Bytes credential;          // tpm2_makecredential's output file
  Date issued;
};
std::string format_ek_challenge(const EkChallenge& c);
EkChallenge parse_ek_challenge(std::string_view text);  // throws FormatError

// Step 2, kept by the vendor: what the answer is checked against and what the
// policy will say.
struct EkPending {
  std::string license_id;
  std::string challenge_id;
  std::string ek_sha256;      // sha256 of the EK certificate (DER)
  std::string ak_sha256;      // ak_fingerprint() of the AK's DER
  std::string secret_sha256;  // sha256 of the wrapped secret, never the secret
  PcrSelection selection;
  std::vector<Bytes> golden;
  Date issued;
};
std::string format_ek_pending(const EkPending& p);
EkPending parse_ek_pending(std::string_view text);  // throws FormatError

// Step 3, customer → vendor.
struct EkAnswer {
  std::string license_id;
  std::string challenge_id;
  Bytes secret;  // what tpm2_activatecredential recovered
};
std::string format_ek_answer(const EkAnswer& a);
EkAnswer parse_ek_answer(std::string_view text);  // throws FormatError

// Step 2's checks and the credential: the EK certificate chains to `cas`, the
// AK area is a restricted fixedTPM P-256 signing key whose name is the one
// the request states. Throws gpulab::UsageError naming the failed check
// (`request_name` in front).
struct EkChallengeMade {
  EkChallenge challenge;
  EkPending pending;
};
EkChallengeMade make_ek_challenge(const EkEnrolRequest& request, const EkCaStore& cas, Date today,
                                  std::string_view request_name);

// Step 4's checks: the answer is for this pending challenge, not older than
// kEkChallengeMaxAgeDays, and its secret hashes to the pending one (compared in
// constant time). Returns the ek-certified policy to sign; throws
// gpulab::UsageError naming `answer_name` otherwise.
AttestPolicy certify_ek_answer(const EkAnswer& answer, const EkPending& pending, Date today,
                               std::string_view answer_name);

}  // namespace licensing
