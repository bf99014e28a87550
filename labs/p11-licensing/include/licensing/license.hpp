// The licence document: its fields, its one canonical text form, and its
// Ed25519 signature. The signed bytes are exactly the lines before
// "signature:", and the parser accepts only text that re-serialises to the
// same bytes, so what is shown, what is checked and what was signed agree.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "licensing/civil_date.hpp"
#include "licensing/ed25519.hpp"
#include "licensing/fingerprint.hpp"

namespace licensing {

struct License {
  std::string id;        // 16 lowercase hex digits
  std::string product;   // [a-z0-9-]
  std::string customer;  // UTF-8, 1..200 bytes
  std::vector<std::string> features;  // sorted, unique, [a-z0-9][a-z0-9_-]*
  std::uint32_t max_gpus = 1;
  Date issued, not_before, expires;   // expires is the last valid day (inclusive)
  std::uint32_t grace_days = 0;
  bool floating = false;              // not bound to hardware
  std::uint32_t hw_max_changed = 0;   // fuzzy-match tolerance k (bound licences)
  std::vector<HwComponent> hw;        // sorted, unique (bound licences)
  std::optional<std::string> activation_nonce;  // set when issued through activation
  std::string key_id;                 // id of the signing key

  [[nodiscard]] bool has_feature(std::string_view f) const;
};

inline constexpr std::uint32_t kMaxGpusLimit = 65536;
inline constexpr std::uint32_t kMaxGraceDays = 365;
inline constexpr std::size_t kMaxLicenseBytes = 64 * 1024;

struct SignedLicense {
  License license;
  std::string payload;  // the signed bytes
  Bytes signature;      // 64 bytes
};

// Throws FormatError when a field is out of range (the same rules the parser enforces).
void validate(const License& l);
std::string canonical_payload(const License& l);
// Sets key_id from the key, signs the canonical payload, returns the file text.
std::string sign_license(License l, const PrivateKey& key);
// Format only — throws FormatError with the reason. Does not check the signature.
SignedLicense parse_license(std::string_view text);

enum class SignatureCheck { kValid, kWrongKey, kInvalid };
SignatureCheck check_signature(const SignedLicense& l, const PublicKey& trusted);

std::string new_license_id();  // 64 random bits, hex

}  // namespace licensing
