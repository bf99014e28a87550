// Ed25519 keys and signatures through OpenSSL 3's EVP interface (RFC 8032,
// pure Ed25519: no pre-hash, no context). A key owns its EVP_PKEY.
#pragma once

#include <filesystem>
#include <memory>
#include <string>

#include "licensing/encoding.hpp"

struct evp_pkey_st;

namespace licensing {

struct PkeyFree {
  void operator()(evp_pkey_st* k) const;
};
using PkeyPtr = std::unique_ptr<evp_pkey_st, PkeyFree>;

class PublicKey {
 public:
  static PublicKey from_raw(const Bytes& raw32);  // throws UsageError on a bad length/point
  static PublicKey from_pem(std::string_view pem);
  static PublicKey load(const std::filesystem::path& path);

  [[nodiscard]] Bytes raw() const;
  [[nodiscard]] std::string pem() const;
  // First 8 bytes of SHA-256(raw key), hex: names the key in licences and messages.
  [[nodiscard]] std::string key_id() const;
  [[nodiscard]] bool verify(std::string_view message, const Bytes& signature) const;

 private:
  explicit PublicKey(PkeyPtr k) : key_(std::move(k)) {}
  PkeyPtr key_;
};

class PrivateKey {
 public:
  static PrivateKey generate();
  static PrivateKey from_seed(const Bytes& seed32);  // RFC 8032 test vectors use raw seeds
  static PrivateKey from_pem(std::string_view pem);
  static PrivateKey load(const std::filesystem::path& path);

  [[nodiscard]] PublicKey public_key() const;
  [[nodiscard]] Bytes sign(std::string_view message) const;  // 64 bytes
  // PKCS#8 PEM; callers write it with write_secret_file (mode 0600).
  [[nodiscard]] std::string pem() const;

 private:
  explicit PrivateKey(PkeyPtr k) : key_(std::move(k)) {}
  PkeyPtr key_;
};

}  // namespace licensing
