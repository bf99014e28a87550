#include "licensing/fuzz_entry.hpp"

#include <string_view>

#include "licensing/activation.hpp"
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
  return true;
}

}  // namespace licensing
