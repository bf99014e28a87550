#include "licensing/attestation.hpp"

#include <fmt/format.h>

#include <stdexcept>

#include "gpulab/errors.hpp"
#include "licensing/digest.hpp"
#include "licensing/record.hpp"

namespace licensing {
namespace {

void check_license_id(const std::string& id, std::string_view what) {
  if (!is_lower_hex(id, 16))
    throw FormatError(std::string(what) + ": license_id must be 16 lowercase hex digits");
}

}  // namespace

std::string_view ak_trust_name(AkTrust t) {
  return t == AkTrust::kEkCertified ? "ek-certified" : "first-use";
}

namespace {

// Everything a policy says, up to (not including) the signature of an
// ek-certified one.
std::string policy_payload(const AttestPolicy& p) {
  std::string out = format_field("gpulab-attest-policy", "2");
  out += format_field("license_id", p.license_id);
  out += format_field("ak_sha256", p.ak_sha256);
  out += format_field("ak_trust", ak_trust_name(p.trust));
  if (p.trust == AkTrust::kEkCertified) out += format_field("ek_sha256", p.ek_sha256);
  out += format_field("pcrs", format_pcr_selection(p.selection));
  for (const Bytes& v : p.golden) out += format_field("pcr_value", to_hex(v));
  if (p.trust == AkTrust::kEkCertified) out += format_field("key_id", p.key_id);
  return out;
}

}  // namespace

std::string format_policy(const AttestPolicy& p) {
  if (p.trust != AkTrust::kFirstUse)
    throw std::logic_error("format_policy: an ek-certified policy is written by sign_policy");
  return policy_payload(p);
}

std::string sign_policy(AttestPolicy p, const PrivateKey& vendor) {
  p.trust = AkTrust::kEkCertified;
  p.key_id = vendor.public_key().key_id();
  const std::string payload = policy_payload(p);
  return payload + format_field("signature", to_base64(vendor.sign(payload)));
}

AttestPolicy parse_policy(std::string_view text) {
  const auto fields = parse_record(text);
  FieldCursor cur(fields, "attestation policy");
  const Field& version = cur.take("gpulab-attest-policy");
  if (version.value != "2") {
    throw FormatError(fmt::format(
        "unsupported attestation policy version '{}' (2 records who vouches for the AK; enrol "
        "again)",
        version.value.substr(0, 16)));
  }
  AttestPolicy p;
  p.license_id = cur.take("license_id").value;
  p.ak_sha256 = cur.take("ak_sha256").value;
  const Field& trust = cur.take("ak_trust");
  if (trust.value == "ek-certified") {
    p.trust = AkTrust::kEkCertified;
    p.ek_sha256 = cur.take("ek_sha256").value;
    if (!is_lower_hex(p.ek_sha256, 64))
      throw FormatError("ek_sha256 must be 64 lowercase hex digits");
  } else if (trust.value != "first-use") {
    throw FormatError("line " + std::to_string(trust.line) +
                      ": ak_trust must be first-use or ek-certified");
  }
  const Field& pcrs = cur.take("pcrs");
  p.selection = parse_pcr_selection(pcrs.value, "line " + std::to_string(pcrs.line) + ": pcrs");
  for (const Field* f : cur.take_repeated("pcr_value")) {
    auto v = from_hex(f->value);
    if (!v || v->size() != kPcrDigestBytes)
      throw FormatError("line " + std::to_string(f->line) +
                        ": pcr_value must be 64 lowercase hex digits");
    p.golden.push_back(std::move(*v));
  }
  if (p.trust == AkTrust::kEkCertified) {
    SignedTail tail = take_signed_tail(cur, text);
    p.key_id = std::move(tail.key_id);
    p.payload = std::move(tail.payload);
    p.signature = std::move(tail.signature);
  } else {
    cur.expect_end();
  }
  check_license_id(p.license_id, "attestation policy");
  if (!is_lower_hex(p.ak_sha256, 64))
    throw FormatError("ak_sha256 must be 64 lowercase hex digits");
  if (p.golden.size() != p.selection.pcrs.size()) {
    throw FormatError(fmt::format("the policy lists {} PCRs and {} pcr_value lines",
                                  p.selection.pcrs.size(), p.golden.size()));
  }
  const std::string canonical = policy_payload(p);
  if (p.trust == AkTrust::kEkCertified ? canonical != p.payload : canonical != text)
    throw FormatError("attestation policy is not in canonical form");
  return p;
}

void check_policy_trust(const AttestPolicy& p, const PublicKey& vendor, bool require_ek,
                        std::string_view policy_name) {
  if (p.trust == AkTrust::kFirstUse) {
    if (require_ek) {
      throw gpulab::UsageError(fmt::format(
          "{} trusts its attestation key on first use and --require-ek-certified is set (enrol "
          "through attest-ek-request)",
          policy_name));
    }
    return;
  }
  if (p.key_id != vendor.key_id() || !vendor.verify(p.payload, p.signature)) {
    throw gpulab::UsageError(fmt::format(
        "{} says ek-certified but is not signed by this vendor key {} (key_id {}): the AK was not "
        "certified here, or the policy was edited",
        policy_name, vendor.key_id(), p.key_id));
  }
}

std::string format_challenge(const AttestChallenge& c) {
  std::string out = format_field("gpulab-attest-challenge", "1");
  out += format_field("license_id", c.license_id);
  out += format_field("nonce", c.nonce);
  out += format_field("pcrs", format_pcr_selection(c.selection));
  out += format_field("issued", format_date(c.issued));
  return out;
}

AttestChallenge parse_challenge(std::string_view text) {
  const auto fields = parse_record(text);
  FieldCursor cur(fields, "attestation challenge");
  if (cur.take("gpulab-attest-challenge").value != "1")
    throw FormatError("unsupported challenge version");
  AttestChallenge c;
  c.license_id = cur.take("license_id").value;
  c.nonce = cur.take("nonce").value;
  const Field& pcrs = cur.take("pcrs");
  c.selection = parse_pcr_selection(pcrs.value, "line " + std::to_string(pcrs.line) + ": pcrs");
  c.issued = date_field(cur.take("issued"));
  cur.expect_end();
  check_license_id(c.license_id, "attestation challenge");
  if (!is_lower_hex(c.nonce, 32)) throw FormatError("nonce must be 32 lowercase hex digits");
  return c;
}

AttestChallenge make_challenge(const AttestPolicy& policy, Date today) {
  return AttestChallenge{policy.license_id, to_hex(random_bytes(16)), policy.selection, today};
}

void verify_attested_request(const ActivationRequest& request, const AttestPolicy& policy,
                             std::string_view policy_name, const AttestChallenge& challenge) {
  if (challenge.license_id != policy.license_id || challenge.selection != policy.selection) {
    throw gpulab::UsageError(
        fmt::format("the challenge is not one made from {} (licence or PCRs differ)", policy_name));
  }
  if (request.license_id != policy.license_id) {
    throw gpulab::UsageError(fmt::format("the request is for licence {}, {} for licence {}",
                                         request.license_id, policy_name, policy.license_id));
  }
  if (!request.quote) {
    throw gpulab::UsageError(fmt::format(
        "the request carries no TPM quote and {} requires one (activate-request --challenge FILE)",
        policy_name));
  }
  const std::string ak = ak_fingerprint(request.quote->ak_public);
  if (ak != policy.ak_sha256) {
    throw gpulab::UsageError(fmt::format(
        "the quote's attestation key {}... is not the one enrolled in {} ({}...): another TPM",
        ak.substr(0, 16), policy_name, policy.ak_sha256.substr(0, 16)));
  }
  if (request.nonce != challenge.nonce) {
    throw gpulab::UsageError(fmt::format(
        "the request answers nonce {}..., not this challenge's {}... (a replayed or stale quote)",
        request.nonce.substr(0, 16), challenge.nonce.substr(0, 16)));
  }
  verify_quote(*request.quote, *from_hex(challenge.nonce), policy.selection, policy.golden,
               policy_name);
}

}  // namespace licensing
