#include "licensing/activation.hpp"

#include <algorithm>

#include "licensing/digest.hpp"
#include "licensing/fingerprint_match.hpp"
#include "licensing/record.hpp"

namespace licensing {
namespace {

Bytes base64_field(const Field& f, std::size_t max_bytes) {
  auto v = from_base64(f.value);
  if (!v || v->empty() || v->size() > max_bytes) {
    throw FormatError("line " + std::to_string(f.line) + ": " + f.key + " must be canonical base64 of 1.." +
                      std::to_string(max_bytes) + " bytes");
  }
  return std::move(*v);
}

// The quote fields after "ak_public" (format_request's order).
TpmQuote take_quote(FieldCursor& cur, const Field& ak) {
  TpmQuote q;
  q.ak_public = base64_field(ak, kMaxAkPublicBytes);
  const Field& pcrs = cur.take("quote_pcrs");
  q.selection = parse_pcr_selection(pcrs.value, "line " + std::to_string(pcrs.line) + ": quote_pcrs");
  for (const Field* f : cur.take_repeated("pcr_value")) {
    auto v = from_hex(f->value);
    if (!v || v->size() != kPcrDigestBytes)
      throw FormatError("line " + std::to_string(f->line) + ": pcr_value must be 64 lowercase hex digits");
    q.pcr_values.push_back(std::move(*v));
  }
  if (q.pcr_values.size() != q.selection.pcrs.size())
    throw FormatError("quote_pcrs lists " + std::to_string(q.selection.pcrs.size()) + " PCRs but " +
                      std::to_string(q.pcr_values.size()) + " pcr_value lines follow");
  q.attest = base64_field(cur.take("quote"), kMaxAttestBytes);
  q.signature = base64_field(cur.take("quote_signature"), kMaxSignatureBytes);
  return q;
}

}  // namespace

ActivationRequest make_request(const SignedLicense& entitlement, const Fingerprint& here, Date today) {
  if (here.product != entitlement.license.product) {
    throw gpulab::UsageError("the fingerprint was taken for product '" + here.product + "', the licence is for '" +
                             entitlement.license.product + "'");
  }
  if (here.components.empty()) throw gpulab::UsageError("no hardware components could be read on this machine");
  return ActivationRequest{entitlement.license.id, entitlement.license.product, entitlement.license.customer,
                           to_hex(random_bytes(16)), today, here.components, std::nullopt};
}

std::string format_request(const ActivationRequest& r) {
  std::string out = format_field("gpulab-activation-request", "1");
  out += format_field("license_id", r.license_id);
  out += format_field("product", r.product);
  out += format_field("customer", r.customer);
  out += format_field("nonce", r.nonce);
  out += format_field("requested", format_date(r.requested));
  for (const auto& c : r.hw) out += format_field("hw", format_component(c));
  if (r.quote) {
    out += format_field("ak_public", to_base64(r.quote->ak_public));
    out += format_field("quote_pcrs", format_pcr_selection(r.quote->selection));
    for (const Bytes& v : r.quote->pcr_values) out += format_field("pcr_value", to_hex(v));
    out += format_field("quote", to_base64(r.quote->attest));
    out += format_field("quote_signature", to_base64(r.quote->signature));
  }
  return out + format_field("digest", sha256_hex(out));
}

ActivationRequest parse_request(std::string_view text) {
  const auto fields = parse_record(text);
  FieldCursor cur(fields, "activation request");
  if (cur.take("gpulab-activation-request").value != "1") throw FormatError("unsupported request version");
  ActivationRequest r;
  r.license_id = cur.take("license_id").value;
  r.product = cur.take("product").value;
  r.customer = cur.take("customer").value;
  r.nonce = cur.take("nonce").value;
  const Field& req = cur.take("requested");
  for (const Field* f : cur.take_repeated("hw")) r.hw.push_back(parse_component(f->value, f->line));
  if (const Field* ak = cur.take_optional("ak_public")) r.quote = take_quote(cur, *ak);
  const Field& digest = cur.take("digest");
  cur.expect_end();
  if (!is_lower_hex(r.license_id, 16)) throw FormatError("license_id must be 16 lowercase hex digits");
  if (!valid_product(r.product)) throw FormatError("bad product name");
  if (!is_lower_hex(r.nonce, 32)) throw FormatError("nonce must be 32 lowercase hex digits");
  auto d = parse_date(req.value);
  if (!d) throw FormatError("line " + std::to_string(req.line) + ": requested must be a YYYY-MM-DD date");
  r.requested = *d;
  if (r.hw.empty()) throw FormatError("the request lists no hardware components");
  if (!std::is_sorted(r.hw.begin(), r.hw.end()) || std::adjacent_find(r.hw.begin(), r.hw.end()) != r.hw.end()) {
    throw FormatError("hardware components must be sorted and unique");
  }
  const std::string expect = sha256_hex(text.substr(0, digest.offset));
  if (!is_lower_hex(digest.value, 64) || !constant_time_equal(reinterpret_cast<const std::uint8_t*>(expect.data()),
                                                              reinterpret_cast<const std::uint8_t*>(digest.value.data()), 64)) {
    throw FormatError("request digest does not match its contents (corrupted in transfer?)");
  }
  if (format_request(r) != text) throw FormatError("request is not in canonical form");
  return r;
}

std::string sign_activation(const ActivationRequest& request, const SignedLicense& entitlement,
                            const PrivateKey& vendor, Date today, std::uint32_t max_changed) {
  if (check_signature(entitlement, vendor.public_key()) != SignatureCheck::kValid) {
    throw gpulab::UsageError("the entitlement licence is not signed by this vendor key");
  }
  const License& ent = entitlement.license;
  if (request.license_id != ent.id) {
    throw gpulab::UsageError("the request is for licence " + request.license_id + ", the entitlement is " + ent.id);
  }
  if (request.product != ent.product) throw gpulab::UsageError("the request is for another product");
  if (const std::string why = check_tolerance(request.hw.size(), max_changed); !why.empty()) {
    throw gpulab::UsageError(why);
  }
  License bound = ent;
  bound.floating = false;
  bound.hw = request.hw;
  bound.hw_max_changed = max_changed;
  bound.activation_nonce = request.nonce;
  bound.issued = std::max(ent.issued, today);
  return sign_license(bound, vendor);
}

SignedLicense accept_activation(std::string_view activation_text, const ActivationRequest& pending,
                                const PublicKey& vendor, const Fingerprint& here) {
  SignedLicense lic = parse_license(activation_text);
  const License& l = lic.license;
  switch (check_signature(lic, vendor)) {
    case SignatureCheck::kValid: break;
    case SignatureCheck::kWrongKey: throw gpulab::UsageError("activation is signed by key " + l.key_id + ", not by the trusted vendor key");
    case SignatureCheck::kInvalid: throw gpulab::UsageError("activation signature does not match its contents");
  }
  if (l.id != pending.license_id) throw gpulab::UsageError("activation is for licence " + l.id + ", the pending request is for " + pending.license_id);
  if (!l.activation_nonce || *l.activation_nonce != pending.nonce) {
    throw gpulab::UsageError("activation does not answer the pending request (nonce differs: replayed or stale activation)");
  }
  if (l.hw != pending.hw) throw gpulab::UsageError("activation is bound to different hardware than the request listed");
  const MatchResult m = match_fingerprint(l.hw, here.components, l.hw_max_changed);
  if (!m.ok()) throw gpulab::UsageError("activation does not match this machine: " + m.explain());
  return lic;
}

}  // namespace licensing
