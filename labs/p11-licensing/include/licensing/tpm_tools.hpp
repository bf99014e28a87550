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

class TpmTools {
 public:
  explicit TpmTools(std::string tcti) : tcti_(std::move(tcti)) {}

  // DER SubjectPublicKeyInfo of this TPM's attestation key.
  Bytes ak_public() const;
  // The current values of the selected PCRs, in selection order.
  std::vector<Bytes> pcr_values(const PcrSelection& s) const;
  // TPM2_Quote over `s` with `nonce` as qualifying data, plus the AK and the values.
  TpmQuote quote(const PcrSelection& s, const Bytes& nonce) const;

  // A tool that is missing throws gpulab::Unsupported (exit 77); one that
  // fails throws gpulab::RunError with its name and the last line it printed.
 private:
  std::string tcti_;
};

}  // namespace licensing
