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
// quote nor an old challenge can be used twice.
//
// Who vouches for the AK is written into the policy (`ak_trust`):
//   first-use     attest-enroll wrote it on the customer's machine: whatever
//                 TPM, or software posing as one, answered then is believed.
//   ek-certified  the vendor wrote it after the EK round trip of
//                 ek_enrolment.hpp (the EK certificate chains to the TPM
//                 vendor's CA, the AK answered a credential only that TPM can
//                 open) and signed it with its own key, because the policy
//                 travels with the customer's files and a customer could
//                 otherwise relabel a first-use policy.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "licensing/activation.hpp"
#include "licensing/civil_date.hpp"
#include "licensing/ed25519.hpp"
#include "licensing/tpm_quote.hpp"

namespace licensing {

enum class AkTrust { kFirstUse, kEkCertified };
std::string_view ak_trust_name(AkTrust t);  // "first-use", "ek-certified"

struct AttestPolicy {
  std::string license_id;
  std::string ak_sha256;  // ak_fingerprint() of the enrolled attestation key
  PcrSelection selection;
  std::vector<Bytes> golden;  // one 32-byte value per PCR of `selection`
  AkTrust trust = AkTrust::kFirstUse;
  // ek-certified only: sha256 of the EK certificate (DER) it was certified
  // through, and the vendor's signature over everything before it.
  std::string ek_sha256{};
  std::string key_id{};
  std::string payload{};
  Bytes signature{};
};
// A first-use policy (unsigned); throws std::logic_error for an ek-certified one.
std::string format_policy(const AttestPolicy& p);
// An ek-certified policy, signed by the vendor.
std::string sign_policy(AttestPolicy p, const PrivateKey& vendor);
AttestPolicy parse_policy(std::string_view text);  // throws FormatError
// sign-activation's check of who vouches for the AK: an ek-certified policy
// must carry `vendor`'s signature; with `require_ek`, a first-use one is
// refused. Throws gpulab::UsageError naming `policy_name`.
void check_policy_trust(const AttestPolicy& p, const PublicKey& vendor, bool require_ek,
                        std::string_view policy_name);

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
