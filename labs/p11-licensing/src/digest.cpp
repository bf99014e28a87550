#include "licensing/digest.hpp"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include <stdexcept>

namespace licensing {

Digest sha256(std::string_view data) {
  Digest d{};
  unsigned int len = 0;
  if (EVP_Digest(data.data(), data.size(), d.data(), &len, EVP_sha256(), nullptr) != 1 ||
      len != d.size()) {
    throw std::runtime_error("SHA-256 failed in OpenSSL");
  }
  return d;
}

std::string sha256_hex(std::string_view data) {
  const Digest d = sha256(data);
  return to_hex(d.data(), d.size());
}

Digest hmac_sha256(const Digest& key, std::string_view data) {
  Digest d{};
  unsigned int len = 0;
  if (HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
           reinterpret_cast<const unsigned char*>(data.data()), data.size(), d.data(),
           &len) == nullptr ||
      len != d.size()) {
    throw std::runtime_error("HMAC-SHA-256 failed in OpenSSL");
  }
  return d;
}

bool constant_time_equal(const std::uint8_t* a, const std::uint8_t* b, std::size_t n) {
  return CRYPTO_memcmp(a, b, n) == 0;
}

bool constant_time_equal(const Bytes& a, const Bytes& b) {
  // Lengths are public (fixed by the format); only the contents are compared in constant time.
  return a.size() == b.size() && constant_time_equal(a.data(), b.data(), a.size());
}

Bytes random_bytes(std::size_t n) {
  Bytes out(n);
  if (RAND_bytes(out.data(), static_cast<int>(n)) != 1) {
    throw std::runtime_error("the system random generator failed (RAND_bytes)");
  }
  return out;
}

}  // namespace licensing
