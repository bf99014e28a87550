// Trust in the attestation key (AK) that does not rest on first use.
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

#include "licensing/encoding.hpp"
#include "licensing/tpm_tools.hpp"

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

// The TPM name (nameAlg sha256 || sha256(TPMT_PUBLIC)) of the AK whose
// TPM2B_PUBLIC is `tpm_public`, after checking that this public area is the
// restricted, fixedTPM, ECDSA P-256 signing key whose DER is `ak_der`.
// Throws gpulab::UsageError for anything else.
Bytes ak_tpm_name(const Bytes& tpm_public, const Bytes& ak_der);

// Enrollment's check: the machine's EK certificate chains to `cas`, and the AK
// given (DER and TPM public area) is resident in that very TPM. Throws
// gpulab::UsageError naming the failed step.
void bind_ak_to_certified_ek(const TpmTools& machine, const EkCaStore& cas, const Bytes& ak_der,
                             const Bytes& ak_tpm_public);

}  // namespace licensing
