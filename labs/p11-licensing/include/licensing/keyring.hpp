// The vendor keys a site trusts, each for a window of issue dates, and how an
// air-gapped site learns of a new one: a rotation statement the old key signs
// ("trust this key from that day; retire me on that day"), checked offline
// against the keyring the site already has. A licence counts only if a key in
// the keyring signed it and its issue date falls in that key's window, so a
// retired key that leaks cannot mint new licences.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "licensing/civil_date.hpp"
#include "licensing/ed25519.hpp"

namespace licensing {

struct TrustedKey {
  PublicKey key;
  std::string id;                   // key.key_id()
  Date valid_from;                  // first issue date this key may sign
  std::optional<Date> valid_until;  // last one (nullopt: still current)
  [[nodiscard]] bool trusted_on(Date issued) const {
    return issued >= valid_from && (!valid_until || issued <= *valid_until);
  }
  [[nodiscard]] std::string window() const;  // "from 2026-01-01 until 2026-06-30" / "from 2026-01-01"
};

struct KeyRotation {
  Bytes new_key;                     // raw 32-byte Ed25519 public key
  Date valid_from;                   // the new key signs from this day
  std::optional<Date> retire_signer;  // the signing key's last day, when it is retired
  std::string key_id;                // the signer
  std::string payload;               // the signed bytes
  Bytes signature;
};

// Vendor side: `old_key` vouches for `new_key`.
std::string sign_key_rotation(const PrivateKey& old_key, const PublicKey& new_key, Date valid_from,
                              std::optional<Date> retire_old);
// Throws FormatError for anything but the one canonical spelling.
KeyRotation parse_key_rotation(std::string_view text);

class Keyring {
 public:
  // A keyring file, or a single PEM public key (trusted for every issue date).
  static Keyring load(const std::filesystem::path& path);
  static Keyring parse(std::string_view text);  // throws FormatError
  static Keyring of(PublicKey key, Date valid_from = Date{0});
  [[nodiscard]] std::string format() const;

  [[nodiscard]] const TrustedKey* find(std::string_view key_id) const;
  [[nodiscard]] const std::vector<TrustedKey>& keys() const { return keys_; }
  [[nodiscard]] std::string ids() const;  // "a1b2..., c3d4..." for messages

  // Verifies the statement (signed by a key of this ring that is trusted on the
  // new key's first day), then adds the new key and retires the signer if asked.
  // Throws gpulab::UsageError naming what does not hold; the ring is unchanged then.
  void apply(const KeyRotation& r);

 private:
  std::vector<TrustedKey> keys_;
};

}  // namespace licensing
