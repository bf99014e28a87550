// The machine's side of attestation: tpm2-tools run as subprocesses against
// one TPM (a TCTI string: "device:/dev/tpmrm0", "swtpm:host=127.0.0.1,port=N").
//
// The attestation key is a primary key of the owner hierarchy made from a
// fixed template (restricted ECDSA P-256 signing key), so the same TPM
// derives the same key every time from its owner seed and nothing has to be
// stored on disk; another TPM, or the same one after a TPM2_Clear, derives
// another. Without a resource manager (swtpm, /dev/tpm0) transient objects
// outlive the tool that made them, so every call flushes them
// (tpm2_flushcontext -t) however it ends.
#pragma once

#include <string>
#include <vector>

#include "licensing/tpm_quote.hpp"

namespace licensing {

// --tcti's default: $TPM2TOOLS_TCTI when set, else the kernel's resource manager.
std::string default_tcti();

// The vendor's side of credential activation, no TPM needed (tpm2_makecredential
// -T none): `secret` wrapped for the EK whose PEM public key is given, bound to
// the TPM object name `ak_name`.
Bytes make_credential(const std::string& ek_public_pem, const Bytes& ak_name, const Bytes& secret);

class TpmTools {
 public:
  explicit TpmTools(std::string tcti) : tcti_(std::move(tcti)) {}

  // DER SubjectPublicKeyInfo of this TPM's attestation key.
  Bytes ak_public() const;
  // The current values of the selected PCRs, in selection order.
  std::vector<Bytes> pcr_values(const PcrSelection& s) const;
  // TPM2_Quote over `s` with `nonce` as qualifying data, plus the AK and the values.
  TpmQuote quote(const PcrSelection& s, const Bytes& nonce) const;

  // The attestation key's TPM2B_PUBLIC and the name the TPM gives it (what a
  // credential is bound to; the vendor recomputes it from the area).
  struct AkArea {
    Bytes tpm_public;
    Bytes name;
  };
  AkArea ak_area() const;
  // The DER EK certificate the TPM vendor stored in NV (RSA EK, index 0x01c00002).
  Bytes ek_certificate() const;
  // TPM2_ActivateCredential with the AK and the (RSA) EK: the secret a
  // credential from make_credential() wraps, or RunError when this TPM cannot
  // unwrap it (another EK) or its integrity check fails (another AK name).
  Bytes activate_credential(const Bytes& credential) const;

  // A tool that is missing throws gpulab::Unsupported (exit 77); one that
  // fails throws gpulab::RunError with its name and the last line it printed.
 private:
  std::string tcti_;
};

}  // namespace licensing
