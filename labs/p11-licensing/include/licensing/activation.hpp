// Air-gapped activation as a file round trip — no licence server, no network:
//
//   customer (air-gapped)                    vendor (offline signing host)
//   activate-request --license ENT  ──USB──▶ sign-activation REQUEST --license ENT
//   activate ACTIVATION             ◀──USB── (a licence bound to the request's hardware,
//                                              carrying the request's nonce)
//
// The nonce makes an activation answer exactly one request: an old activation
// file replayed on a re-imaged or cloned machine is refused, because the
// pending request (and its nonce) it answered is gone.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "licensing/civil_date.hpp"
#include "licensing/fingerprint.hpp"
#include "licensing/license.hpp"
#include "licensing/tpm_quote.hpp"

namespace licensing {

struct ActivationRequest {
  std::string license_id;
  std::string product;
  std::string customer;
  std::string nonce;  // 32 lowercase hex digits (128 random bits)
  Date requested;
  std::vector<HwComponent> hw;  // this machine's fingerprint
  // Present when the request answers an attestation challenge (attestation.hpp);
  // `nonce` is then the challenge's.
  std::optional<TpmQuote> quote;
};

// The request for `entitlement` from the machine with fingerprint `here`, with a fresh nonce.
ActivationRequest make_request(const SignedLicense& entitlement, const Fingerprint& here, Date today);
// Ends with "digest: <sha256>" so a truncated or corrupted transfer is caught.
std::string format_request(const ActivationRequest& r);
ActivationRequest parse_request(std::string_view text);  // throws FormatError

// Vendor side: checks the entitlement is the vendor's own and matches the
// request, then issues a hardware-bound licence carrying the request's nonce.
std::string sign_activation(const ActivationRequest& request, const SignedLicense& entitlement,
                            const PrivateKey& vendor, Date today, std::uint32_t max_changed);

// Customer side: the activation must be signed by `vendor`, answer `pending`
// (same licence id and nonce, same hardware) and match this machine.
// Returns the licence to install; throws gpulab::UsageError with the reason.
SignedLicense accept_activation(std::string_view activation_text, const ActivationRequest& pending,
                                const PublicKey& vendor, const Fingerprint& here);

}  // namespace licensing
