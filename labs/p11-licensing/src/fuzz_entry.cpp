#include "licensing/fuzz_entry.hpp"

#include <string_view>

#include "licensing/activation.hpp"
#include "licensing/attestation.hpp"
#include "licensing/ek_enrolment.hpp"
#include "licensing/fingerprint.hpp"
#include "licensing/license.hpp"
#include "licensing/record.hpp"

namespace licensing {

bool fuzz_one_input(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const SignedLicense l = parse_license(text);
    if (l.payload + format_field("signature", to_base64(l.signature)) != text) return false;
  } catch (const FormatError&) {
  }
  try {
    if (format_fingerprint(parse_fingerprint(text)) != text) return false;
  } catch (const FormatError&) {
  }
  try {
    if (format_request(parse_request(text)) != text) return false;
  } catch (const FormatError&) {
  }
  // The attestation policy (an ek-certified one re-serialises as payload + signature).
  try {
    const AttestPolicy p = parse_policy(text);
    const std::string again = p.trust == AkTrust::kFirstUse
                                  ? format_policy(p)
                                  : p.payload + format_field("signature", to_base64(p.signature));
    if (again != text) return false;
  } catch (const FormatError&) {
  }
  // The four files of the EK enrolment round trip.
  try {
    if (format_ek_request(parse_ek_request(text)) != text) return false;
  } catch (const FormatError&) {
  }
  try {
    if (format_ek_challenge(parse_ek_challenge(text)) != text) return false;
  } catch (const FormatError&) {
  }
  try {
    if (format_ek_pending(parse_ek_pending(text)) != text) return false;
  } catch (const FormatError&) {
  }
  try {
    if (format_ek_answer(parse_ek_answer(text)) != text) return false;
  } catch (const FormatError&) {
  }
  return true;
}

}  // namespace licensing
