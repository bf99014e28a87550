#include "licensing/ed25519.hpp"

#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include <stdexcept>

#include "gpulab/errors.hpp"
#include "licensing/digest.hpp"
#include "licensing/secure_file.hpp"

namespace licensing {

void PkeyFree::operator()(evp_pkey_st* k) const { EVP_PKEY_free(k); }

namespace {

struct BioFree {
  void operator()(BIO* b) const { BIO_free(b); }
};
struct MdCtxFree {
  void operator()(EVP_MD_CTX* c) const { EVP_MD_CTX_free(c); }
};
using BioPtr = std::unique_ptr<BIO, BioFree>;
using MdCtxPtr = std::unique_ptr<EVP_MD_CTX, MdCtxFree>;

constexpr std::size_t kPemLimit = 16 * 1024;

BioPtr mem_bio(std::string_view text) {
  BioPtr bio(BIO_new_mem_buf(text.data(), static_cast<int>(text.size())));
  if (!bio) throw std::runtime_error("OpenSSL: out of memory");
  return bio;
}

std::string bio_text(BIO* bio) {
  char* data = nullptr;
  const long n = BIO_get_mem_data(bio, &data);
  return std::string(data, static_cast<std::size_t>(n));
}

bool is_ed25519(const EVP_PKEY* k) { return EVP_PKEY_get_id(k) == EVP_PKEY_ED25519; }

}  // namespace

PublicKey PublicKey::from_raw(const Bytes& raw32) {
  if (raw32.size() != 32) throw gpulab::UsageError("an Ed25519 public key is 32 bytes");
  PkeyPtr k(EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, nullptr, raw32.data(), raw32.size()));
  if (!k) throw gpulab::UsageError("not a valid Ed25519 public key");
  return PublicKey(std::move(k));
}

PublicKey PublicKey::from_pem(std::string_view pem) {
  BioPtr bio = mem_bio(pem);
  PkeyPtr k(PEM_read_bio_PUBKEY(bio.get(), nullptr, nullptr, nullptr));
  if (!k || !is_ed25519(k.get())) {
    throw gpulab::UsageError("not a PEM Ed25519 public key (expected 'BEGIN PUBLIC KEY')");
  }
  return PublicKey(std::move(k));
}

PublicKey PublicKey::load(const std::filesystem::path& path) {
  // The reader's errors name the file already; only the parser's need it in front.
  const std::string pem = read_file_limited(path, kPemLimit);
  try {
    return from_pem(pem);
  } catch (const gpulab::UsageError& e) {
    throw gpulab::UsageError(path.string() + ": " + e.what());
  }
}

Bytes PublicKey::raw() const {
  Bytes out(32);
  std::size_t len = out.size();
  if (EVP_PKEY_get_raw_public_key(key_.get(), out.data(), &len) != 1 || len != 32) {
    throw std::runtime_error("OpenSSL: cannot export the public key");
  }
  return out;
}

std::string PublicKey::pem() const {
  BioPtr bio(BIO_new(BIO_s_mem()));
  if (!bio || PEM_write_bio_PUBKEY(bio.get(), key_.get()) != 1) {
    throw std::runtime_error("OpenSSL: cannot encode the public key");
  }
  return bio_text(bio.get());
}

std::string PublicKey::key_id() const {
  const Bytes r = raw();
  const Digest d = sha256(std::string_view(reinterpret_cast<const char*>(r.data()), r.size()));
  return to_hex(d.data(), 8);
}

bool PublicKey::verify(std::string_view message, const Bytes& signature) const {
  if (signature.size() != 64) return false;
  MdCtxPtr ctx(EVP_MD_CTX_new());
  if (!ctx || EVP_DigestVerifyInit(ctx.get(), nullptr, nullptr, nullptr, key_.get()) != 1) {
    throw std::runtime_error("OpenSSL: cannot start Ed25519 verification");
  }
  // OpenSSL's ED25519_verify compares the recomputed R with CRYPTO_memcmp (constant time).
  return EVP_DigestVerify(ctx.get(), signature.data(), signature.size(),
                          reinterpret_cast<const unsigned char*>(message.data()),
                          message.size()) == 1;
}

PrivateKey PrivateKey::generate() {
  EVP_PKEY* raw = EVP_PKEY_Q_keygen(nullptr, nullptr, "ED25519");
  if (!raw) throw std::runtime_error("OpenSSL: Ed25519 key generation failed");
  return PrivateKey(PkeyPtr(raw));
}

PrivateKey PrivateKey::from_seed(const Bytes& seed32) {
  if (seed32.size() != 32) throw gpulab::UsageError("an Ed25519 private seed is 32 bytes");
  PkeyPtr k(EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, nullptr, seed32.data(), seed32.size()));
  if (!k) throw std::runtime_error("OpenSSL: cannot import the Ed25519 seed");
  return PrivateKey(std::move(k));
}

PrivateKey PrivateKey::from_pem(std::string_view pem) {
  BioPtr bio = mem_bio(pem);
  PkeyPtr k(PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr));
  if (!k || !is_ed25519(k.get())) {
    throw gpulab::UsageError("not a PEM Ed25519 private key (expected 'BEGIN PRIVATE KEY')");
  }
  return PrivateKey(std::move(k));
}

PrivateKey PrivateKey::load(const std::filesystem::path& path) {
  // The reader's errors name the file already; only the parser's need it in front.
  const std::string pem = read_file_limited(path, kPemLimit);
  try {
    return from_pem(pem);
  } catch (const gpulab::UsageError& e) {
    throw gpulab::UsageError(path.string() + ": " + e.what());
  }
}

PublicKey PrivateKey::public_key() const {
  Bytes raw(32);
  std::size_t len = raw.size();
  if (EVP_PKEY_get_raw_public_key(key_.get(), raw.data(), &len) != 1 || len != 32) {
    throw std::runtime_error("OpenSSL: cannot derive the public key");
  }
  return PublicKey::from_raw(raw);
}

Bytes PrivateKey::sign(std::string_view message) const {
  MdCtxPtr ctx(EVP_MD_CTX_new());
  if (!ctx || EVP_DigestSignInit(ctx.get(), nullptr, nullptr, nullptr, key_.get()) != 1) {
    throw std::runtime_error("OpenSSL: cannot start Ed25519 signing");
  }
  Bytes sig(64);
  std::size_t len = sig.size();
  if (EVP_DigestSign(ctx.get(), sig.data(), &len,
                     reinterpret_cast<const unsigned char*>(message.data()), message.size()) != 1 ||
      len != 64) {
    throw std::runtime_error("OpenSSL: Ed25519 signing failed");
  }
  return sig;
}

std::string PrivateKey::pem() const {
  BioPtr bio(BIO_new(BIO_s_mem()));
  if (!bio || PEM_write_bio_PrivateKey(bio.get(), key_.get(), nullptr, nullptr, 0, nullptr,
                                       nullptr) != 1) {
    throw std::runtime_error("OpenSSL: cannot encode the private key");
  }
  return bio_text(bio.get());
}

}  // namespace licensing
