// A TPM 2.0 quote and its offline verification with OpenSSL: the structures
// TPM2_Quote returns (TPMS_ATTEST, TPMT_SIGNATURE; TPM 2.0 Library spec
// part 2, 10.12 and 11.3) parsed with bounds on every length, the ECDSA
// signature checked against the attestation key's public half, the nonce
// and the PCR digest compared. No tpm2-tools on the verifier: the vendor's
// offline signing host needs nothing but this library, and each refusal says
// which check failed (which PCR, which nonce) instead of "verify failed".
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "licensing/encoding.hpp"

namespace licensing {

// A PCR bank and the registers quoted from it, e.g. "sha256:0,7,16".
// Only sha256 (the bank every TPM 2.0 has, and the one golden values are
// recorded in); registers 0..23, strictly ascending: one spelling per list.
struct PcrSelection {
  std::string bank = "sha256";
  std::vector<unsigned> pcrs;
  friend bool operator==(const PcrSelection&, const PcrSelection&) = default;
};
inline constexpr unsigned kPcrCount = 24;
inline constexpr std::size_t kPcrDigestBytes = 32;
// Throws FormatError naming `what` (a flag or a file field).
PcrSelection parse_pcr_selection(std::string_view text, std::string_view what);
std::string format_pcr_selection(const PcrSelection& s);

// What the machine sends: the quote plus the values it claims the PCRs hold.
struct TpmQuote {
  Bytes ak_public;  // the attestation key, DER SubjectPublicKeyInfo (P-256)
  PcrSelection selection;
  std::vector<Bytes> pcr_values;  // one 32-byte value per selected PCR, in order
  Bytes attest;                   // TPMS_ATTEST as the TPM marshalled it (the signed bytes)
  Bytes signature;                // TPMT_SIGNATURE (ECDSA with SHA-256)
};
inline constexpr std::size_t kMaxAttestBytes = 1024;
inline constexpr std::size_t kMaxSignatureBytes = 512;
inline constexpr std::size_t kMaxAkPublicBytes = 512;

// The fields of a TPMS_ATTEST of type TPM_ST_ATTEST_QUOTE that matter here.
struct QuoteInfo {
  Bytes extra_data;  // the verifier's nonce
  PcrSelection selection;
  Bytes pcr_digest;  // SHA-256 over the selected PCR values, in selection order
};
// Throws FormatError for anything but a well-formed sha256 quote.
QuoteInfo parse_quote_info(const Bytes& attest);

// "sha256 of the AK's DER", the id a policy pins.
std::string ak_fingerprint(const Bytes& ak_public);

// The checks in the order a forger would have to pass them; throws
// gpulab::UsageError with a one-line reason naming the first that fails:
// the signature (by `quote.ak_public`), the nonce, the selection, the
// reported values against the signed digest, then each value against
// `golden` (one per PCR of `expected`).
void verify_quote(const TpmQuote& quote, const Bytes& nonce, const PcrSelection& expected,
                  const std::vector<Bytes>& golden, std::string_view golden_source);

}  // namespace licensing
