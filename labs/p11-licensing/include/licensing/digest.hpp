// SHA-256, HMAC-SHA-256, constant-time comparison and the system CSPRNG —
// thin wrappers over OpenSSL 3 so the rest of the lab never touches EVP.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

#include "licensing/encoding.hpp"

namespace licensing {

using Digest = std::array<std::uint8_t, 32>;

Digest sha256(std::string_view data);
std::string sha256_hex(std::string_view data);
Digest hmac_sha256(const Digest& key, std::string_view data);

// Compares in time independent of where the inputs differ (CRYPTO_memcmp):
// for tags and signatures, where an early exit would leak the prefix length.
bool constant_time_equal(const std::uint8_t* a, const std::uint8_t* b, std::size_t n);
bool constant_time_equal(const Bytes& a, const Bytes& b);

// Bytes from the OS generator (RAND_bytes); throws if it fails.
Bytes random_bytes(std::size_t n);

}  // namespace licensing
