// Trust in the attestation key (AK) that does not rest on first use: the
// vendor's checks of what a customer's TPM sends (ek_enrolment.hpp carries it
// across the air gap).
//
// A TPM vendor certifies each TPM's endorsement key (EK) with an X.509
// certificate kept in the TPM's NV memory. The licence vendor checks that
// certificate against the TPM vendor's CA, then binds the AK to that EK with
// credential activation: a secret encrypted to the EK public key and tied to
// the AK's TPM name can only be recovered by the TPM holding that EK, and only
// when an object with exactly that name is loaded in it. A software key, or an
// AK from another TPM, therefore cannot pass.
#pragma once

#include <string>
#include <string_view>

#include "licensing/encoding.hpp"

namespace licensing {

// The largest CA bundle and EK certificate read (both are a few KiB at most).
inline constexpr std::size_t kMaxEkCaBytes = 256 * 1024;
inline constexpr std::size_t kMaxEkCertBytes = 4096;

// The trusted CA certificates of one --ek-ca file (PEM, one or more).
class EkCaStore {
 public:
  // Throws gpulab::UsageError naming `path` when it is unreadable, too big or
  // holds no PEM certificate.
  explicit EkCaStore(const std::string& path);
  ~EkCaStore();
  EkCaStore(const EkCaStore&) = delete;
  EkCaStore& operator=(const EkCaStore&) = delete;

  // Verifies the DER EK certificate against these CAs and returns its public
  // key as PEM; throws gpulab::UsageError naming OpenSSL's reason otherwise.
  [[nodiscard]] std::string verify_ek(const Bytes& ek_cert_der) const;
  [[nodiscard]] const std::string& path() const { return path_; }

 private:
  std::string path_;
  void* store_ = nullptr;  // X509_STORE*, kept out of the header
};

// What the vendor learns from an AK's TPM2B_PUBLIC once it has checked that
// it is the restricted, fixedTPM, ECDSA P-256 signing key of tpm_tools.cpp's
// template: its DER SubjectPublicKeyInfo (what quotes are verified with and
// policies pin) and its TPM name (nameAlg sha256 || sha256(TPMT_PUBLIC), what
// a credential is bound to). Throws gpulab::UsageError for anything else.
struct AkPublicArea {
  Bytes der;
  Bytes name;
};
AkPublicArea check_ak_public(const Bytes& tpm_public);

// An EK certificate as one canonical PEM block and back. The parser takes
// exactly one certificate whose PEM re-encodes to the same text, so one
// certificate has one spelling; throws gpulab::UsageError otherwise.
std::string ek_certificate_pem(const Bytes& der);
Bytes ek_certificate_der(std::string_view pem);

}  // namespace licensing
