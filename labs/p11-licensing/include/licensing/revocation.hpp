// A signed list of revoked licences and vendor keys, delivered to an
// air-gapped site like a licence (a file) and checked offline. Each list has
// a serial number; a site that keeps the lists it has seen uses the newest.
// A list may revoke only keys no newer than the key that signed it, so a
// stolen old key cannot revoke its own replacement.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "licensing/civil_date.hpp"
#include "licensing/ed25519.hpp"
#include "licensing/keyring.hpp"

namespace licensing {

inline constexpr std::size_t kMaxRevocationBytes = 256 * 1024;
inline constexpr std::uint64_t kMaxRevocationSerial = std::uint64_t{1} << 53;  // exact in any JSON reader

struct Revocations {
  std::uint64_t serial = 0;
  Date issued;
  std::vector<std::string> licences;  // licence ids, sorted, unique
  std::vector<std::string> keys;      // key ids, sorted, unique
  std::string key_id;                 // the signer
  std::string payload;
  Bytes signature;

  [[nodiscard]] bool revokes_licence(std::string_view id) const;
  [[nodiscard]] bool revokes_key(std::string_view id) const;
};

std::string sign_revocations(Revocations r, const PrivateKey& key);
Revocations parse_revocations(std::string_view text);  // throws FormatError
// Throws gpulab::UsageError unless a key of `trusted` signed it on a day in
// its window, and every key it revokes is no newer than that signer.
void verify_revocations(const Revocations& r, const Keyring& trusted);

}  // namespace licensing
