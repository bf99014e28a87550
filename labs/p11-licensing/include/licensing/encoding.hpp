// Byte strings and their two text encodings in licence files: lowercase hex
// for hashes and ids, standard base64 for signatures. Decoders are strict:
// anything that would not re-encode to the same text is rejected, so one
// value has exactly one spelling (a licence cannot be "re-encoded").
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace licensing {

using Bytes = std::vector<std::uint8_t>;

std::string to_hex(const std::uint8_t* data, std::size_t size);
inline std::string to_hex(const Bytes& b) { return to_hex(b.data(), b.size()); }
// Lowercase hex only; nullopt on odd length, uppercase or any other character.
std::optional<Bytes> from_hex(std::string_view hex);
bool is_lower_hex(std::string_view s, std::size_t expected_len);

std::string to_base64(const Bytes& b);
// Canonical padded base64 (RFC 4648 §4) only; nullopt otherwise.
std::optional<Bytes> from_base64(std::string_view text);

// Strict UTF-8 (no overlongs, no surrogates, nothing above U+10FFFF).
bool is_valid_utf8(std::string_view s);

// Canonical unsigned decimal: no sign, no leading zeros, at most `max`.
std::optional<std::uint64_t> parse_uint(std::string_view s, std::uint64_t max);

}  // namespace licensing
