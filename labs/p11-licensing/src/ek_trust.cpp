#include "licensing/ek_trust.hpp"

#include <fmt/format.h>
#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>

#include <algorithm>
#include <memory>

#include "gpulab/errors.hpp"
#include "licensing/digest.hpp"
#include "licensing/secure_file.hpp"
#include "licensing/tpm_quote.hpp"

namespace licensing {
namespace {

struct BioFree {
  void operator()(BIO* b) const { BIO_free(b); }
};
struct X509Free {
  void operator()(X509* x) const { X509_free(x); }
};
struct StoreCtxFree {
  void operator()(X509_STORE_CTX* c) const { X509_STORE_CTX_free(c); }
};
struct PkeyFree {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};

X509_STORE* as_store(void* p) {
  return static_cast<X509_STORE*>(p);
}

// A bounds-checked reader over a TPM structure (big-endian fields).
class TpmReader {
 public:
  explicit TpmReader(const Bytes& b) : b_(b) {}
  std::uint16_t u16() {
    need(2);
    const auto v = static_cast<std::uint16_t>((b_[at_] << 8) | b_[at_ + 1]);
    at_ += 2;
    return v;
  }
  std::uint32_t u32() {
    const std::uint32_t hi = u16();
    return (hi << 16) | u16();
  }
  Bytes sized() {  // a TPM2B: u16 size, then that many bytes
    const std::size_t n = u16();
    need(n);
    Bytes out(b_.begin() + static_cast<std::ptrdiff_t>(at_),
              b_.begin() + static_cast<std::ptrdiff_t>(at_ + n));
    at_ += n;
    return out;
  }
  [[nodiscard]] std::size_t at() const { return at_; }
  [[nodiscard]] bool done() const { return at_ == b_.size(); }

 private:
  void need(std::size_t n) const {
    if (b_.size() - at_ < n) throw gpulab::UsageError("the AK public area is truncated");
  }
  const Bytes& b_;
  std::size_t at_ = 0;
};

// TPM 2.0 constants (TPM 2.0 Part 2) for the AK template tpm_tools.cpp uses.
constexpr std::uint16_t kAlgEcc = 0x0023, kAlgSha256 = 0x000b, kAlgNull = 0x0010,
                        kAlgEcdsa = 0x0018, kCurveP256 = 0x0003;
constexpr std::uint32_t kFixedTpm = 1u << 1, kFixedParent = 1u << 4, kRestricted = 1u << 16,
                        kSign = 1u << 18, kDecrypt = 1u << 17;
// DER SubjectPublicKeyInfo of a P-256 key up to the uncompressed point's 0x04.
constexpr std::uint8_t kP256SpkiPrefix[] = {0x30, 0x59, 0x30, 0x13, 0x06, 0x07, 0x2a, 0x86, 0x48,
                                            0xce, 0x3d, 0x02, 0x01, 0x06, 0x08, 0x2a, 0x86, 0x48,
                                            0xce, 0x3d, 0x03, 0x01, 0x07, 0x03, 0x42, 0x00, 0x04};

}  // namespace

EkCaStore::EkCaStore(const std::string& path) : path_(path) {
  std::string pem;
  try {
    pem = read_file_limited(path, kMaxEkCaBytes);
  } catch (const std::exception& e) {
    throw gpulab::UsageError(fmt::format("--ek-ca {}: {}", path, e.what()));
  }
  std::unique_ptr<BIO, BioFree> bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  X509_STORE* store = X509_STORE_new();
  if (!bio || !store) throw std::runtime_error("OpenSSL: out of memory");
  store_ = store;
  int count = 0;
  while (std::unique_ptr<X509, X509Free> cert{
      PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr)}) {
    if (X509_STORE_add_cert(store, cert.get()) != 1) {
      ERR_clear_error();
      continue;  // a duplicate of one already added
    }
    ++count;
  }
  ERR_clear_error();  // the loop ends on "no start line"
  if (count == 0) {
    X509_STORE_free(store);
    store_ = nullptr;
    throw gpulab::UsageError(fmt::format("--ek-ca {}: no PEM certificate in it", path));
  }
}

EkCaStore::~EkCaStore() {
  X509_STORE_free(as_store(store_));
}

std::string EkCaStore::verify_ek(const Bytes& der) const {
  if (der.empty() || der.size() > kMaxEkCertBytes)
    throw gpulab::UsageError(fmt::format("the TPM's EK certificate is {} bytes", der.size()));
  const unsigned char* p = der.data();
  std::unique_ptr<X509, X509Free> cert(d2i_X509(nullptr, &p, static_cast<long>(der.size())));
  if (!cert) {
    ERR_clear_error();
    throw gpulab::UsageError("the TPM's EK certificate is not DER X.509");
  }
  std::unique_ptr<X509_STORE_CTX, StoreCtxFree> ctx(X509_STORE_CTX_new());
  if (!ctx || X509_STORE_CTX_init(ctx.get(), as_store(store_), cert.get(), nullptr) != 1)
    throw std::runtime_error("OpenSSL: X509_STORE_CTX_init");
  if (X509_verify_cert(ctx.get()) != 1) {
    const int err = X509_STORE_CTX_get_error(ctx.get());
    ERR_clear_error();
    throw gpulab::UsageError(fmt::format("the TPM's EK certificate does not chain to {}: {}", path_,
                                         X509_verify_cert_error_string(err)));
  }
  EVP_PKEY* key = X509_get0_pubkey(cert.get());
  std::unique_ptr<BIO, BioFree> out(BIO_new(BIO_s_mem()));
  if (!key || !out || PEM_write_bio_PUBKEY(out.get(), key) != 1)
    throw gpulab::UsageError("the TPM's EK certificate carries no usable public key");
  char* data = nullptr;
  const long n = BIO_get_mem_data(out.get(), &data);
  return std::string(data, static_cast<std::size_t>(n));
}

AkPublicArea check_ak_public(const Bytes& tpm_public) {
  if (tpm_public.size() > kMaxAkPublicBytes)
    throw gpulab::UsageError("the AK public area is larger than 512 bytes");
  TpmReader r(tpm_public);
  const std::size_t size = r.u16();
  if (size != tpm_public.size() - 2)
    throw gpulab::UsageError("the AK public area's size field does not match its length");
  if (r.u16() != kAlgEcc || r.u16() != kAlgSha256)
    throw gpulab::UsageError("the AK is not an ECC key with a sha256 name");
  const std::uint32_t attrs = r.u32();
  const std::uint32_t want = kFixedTpm | kFixedParent | kRestricted | kSign;
  if ((attrs & want) != want || (attrs & kDecrypt))
    throw gpulab::UsageError(
        "the AK is not a restricted fixedTPM signing key (it could have come from outside a TPM)");
  (void)r.sized();  // authPolicy
  if (r.u16() != kAlgNull || r.u16() != kAlgEcdsa || r.u16() != kAlgSha256 ||
      r.u16() != kCurveP256 || r.u16() != kAlgNull)
    throw gpulab::UsageError("the AK is not an ECDSA-SHA256 P-256 key");
  const Bytes x = r.sized();
  const Bytes y = r.sized();
  if (!r.done() || x.size() != 32 || y.size() != 32)
    throw gpulab::UsageError("the AK public area has trailing bytes or a bad point size");
  AkPublicArea out;
  out.der.assign(std::begin(kP256SpkiPrefix), std::end(kP256SpkiPrefix));
  out.der.insert(out.der.end(), x.begin(), x.end());
  out.der.insert(out.der.end(), y.begin(), y.end());
  const Digest d = sha256(std::string_view(reinterpret_cast<const char*>(tpm_public.data()) + 2,
                                           tpm_public.size() - 2));
  out.name = {0x00, 0x0b};  // nameAlg TPM_ALG_SHA256, big-endian
  out.name.insert(out.name.end(), d.begin(), d.end());
  return out;
}

std::string ek_certificate_pem(const Bytes& der) {
  const unsigned char* p = der.data();
  std::unique_ptr<X509, X509Free> cert(d2i_X509(nullptr, &p, static_cast<long>(der.size())));
  std::unique_ptr<BIO, BioFree> out(BIO_new(BIO_s_mem()));
  // No end check: NV may hold the certificate padded; PEM re-encodes just the certificate.
  if (!cert || !out || PEM_write_bio_X509(out.get(), cert.get()) != 1) {
    ERR_clear_error();
    throw gpulab::UsageError("the TPM's EK certificate is not DER X.509");
  }
  char* data = nullptr;
  const long n = BIO_get_mem_data(out.get(), &data);
  return std::string(data, static_cast<std::size_t>(n));
}

Bytes ek_certificate_der(std::string_view pem) {
  if (pem.size() > 2 * kMaxEkCertBytes)
    throw gpulab::UsageError("the EK certificate is larger than 4 KiB");
  std::unique_ptr<BIO, BioFree> bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  std::unique_ptr<X509, X509Free> cert(
      bio ? PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr) : nullptr);
  ERR_clear_error();
  if (!cert) throw gpulab::UsageError("the EK certificate is not a PEM X.509 certificate");
  const int n = i2d_X509(cert.get(), nullptr);
  if (n <= 0 || static_cast<std::size_t>(n) > kMaxEkCertBytes)
    throw gpulab::UsageError("the EK certificate is larger than 4 KiB");
  Bytes der(static_cast<std::size_t>(n));
  unsigned char* p = der.data();
  if (i2d_X509(cert.get(), &p) != n) throw std::runtime_error("OpenSSL: i2d_X509");
  // One spelling: no second certificate, no text around it, the standard line breaks.
  if (ek_certificate_pem(der) != pem)
    throw gpulab::UsageError("the EK certificate is not one canonical PEM block");
  return der;
}

}  // namespace licensing
