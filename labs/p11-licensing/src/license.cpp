#include "licensing/license.hpp"

#include <algorithm>

#include "licensing/digest.hpp"
#include "licensing/encoding.hpp"
#include "licensing/record.hpp"

namespace licensing {

namespace {

bool valid_feature(std::string_view f) {
  if (f.empty() || f.size() > 64 || f.front() == '-' || f.front() == '_') return false;
  return std::all_of(f.begin(), f.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
  });
}

template <class T>
bool sorted_unique(const std::vector<T>& v) {
  return std::is_sorted(v.begin(), v.end()) && std::adjacent_find(v.begin(), v.end()) == v.end();
}

std::string join(const std::vector<std::string>& v, char sep) {
  std::string out;
  for (const auto& s : v) {
    if (!out.empty()) out.push_back(sep);
    out += s;
  }
  return out;
}

std::vector<std::string> split(std::string_view s, char sep) {
  std::vector<std::string> out;
  std::size_t start = 0;
  for (;;) {
    const std::size_t p = s.find(sep, start);
    out.emplace_back(s.substr(start, p == std::string_view::npos ? std::string_view::npos : p - start));
    if (p == std::string_view::npos) return out;
    start = p + 1;
  }
}

std::uint32_t parse_u32(const Field& f, std::uint32_t max) { return static_cast<std::uint32_t>(uint_field(f, max)); }

Date parse_date_field(const Field& f) { return date_field(f); }

}  // namespace

bool License::has_feature(std::string_view f) const {
  return std::binary_search(features.begin(), features.end(), f);
}

void validate(const License& l) {
  if (!is_lower_hex(l.id, 16)) throw FormatError("licence id must be 16 lowercase hex digits");
  if (!valid_product(l.product)) throw FormatError("product must match [a-z0-9][a-z0-9-]* (at most 64)");
  if (l.customer.empty() || l.customer.size() > 200 || !is_valid_utf8(l.customer) ||
      l.customer.front() == ' ' || l.customer.back() == ' ' ||
      std::any_of(l.customer.begin(), l.customer.end(),
                  [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; })) {
    throw FormatError("customer must be 1-200 bytes of UTF-8 text without control characters or outer blanks");
  }
  if (l.features.empty()) throw FormatError("a licence grants at least one feature");
  for (const auto& f : l.features) {
    if (!valid_feature(f)) throw FormatError("feature '" + f + "' must match [a-z0-9][a-z0-9_-]*");
  }
  if (!sorted_unique(l.features)) throw FormatError("features must be sorted and unique");
  if (l.max_gpus < 1 || l.max_gpus > kMaxGpusLimit) throw FormatError("max_gpus must be 1.." + std::to_string(kMaxGpusLimit));
  if (l.grace_days > kMaxGraceDays) throw FormatError("grace_days must be at most " + std::to_string(kMaxGraceDays));
  if (l.expires < l.not_before) throw FormatError("expires is before not_before");
  if (l.floating != l.hw.empty()) {
    throw FormatError(l.floating ? "a floating licence lists no hardware" : "a hardware-bound licence lists its components");
  }
  if (l.floating && l.hw_max_changed != 0) throw FormatError("a floating licence has no hw_max_changed");
  for (const auto& c : l.hw) {
    if (!valid_kind(c.kind) || !is_lower_hex(c.hash, 64)) throw FormatError("bad hardware component");
  }
  if (!sorted_unique(l.hw)) throw FormatError("hardware components must be sorted and unique");
  if (!l.floating && l.hw_max_changed >= l.hw.size() - l.hw_max_changed) {
    throw FormatError("hw_max_changed must leave more than half of the components required");
  }
  if (l.activation_nonce && !is_lower_hex(*l.activation_nonce, 32)) {
    throw FormatError("activation_nonce must be 32 lowercase hex digits");
  }
  if (!is_lower_hex(l.key_id, 16)) throw FormatError("key_id must be 16 lowercase hex digits");
}

std::string canonical_payload(const License& l) {
  validate(l);
  std::string out = format_field("gpulab-license", "1");
  out += format_field("id", l.id);
  out += format_field("product", l.product);
  out += format_field("customer", l.customer);
  out += format_field("features", join(l.features, ','));
  out += format_field("max_gpus", std::to_string(l.max_gpus));
  out += format_field("issued", format_date(l.issued));
  out += format_field("not_before", format_date(l.not_before));
  out += format_field("expires", format_date(l.expires));
  out += format_field("grace_days", std::to_string(l.grace_days));
  out += format_field("binding", l.floating ? "floating" : "hardware");
  if (!l.floating) {
    out += format_field("hw_max_changed", std::to_string(l.hw_max_changed));
    for (const auto& c : l.hw) out += format_field("hw", format_component(c));
  }
  if (l.activation_nonce) out += format_field("activation_nonce", *l.activation_nonce);
  out += format_field("key_id", l.key_id);
  return out;
}

std::string sign_license(License l, const PrivateKey& key) {
  l.key_id = key.public_key().key_id();
  const std::string payload = canonical_payload(l);
  return payload + format_field("signature", to_base64(key.sign(payload)));
}

SignedLicense parse_license(std::string_view text) {
  if (text.size() > kMaxLicenseBytes) throw FormatError("licence larger than 64 KiB");
  const auto fields = parse_record(text);
  FieldCursor cur(fields, "licence");
  const Field& magic = cur.take("gpulab-license");
  if (magic.value != "1") throw FormatError("line 1: unsupported licence format version '" + magic.value + "'");

  SignedLicense s;
  License& l = s.license;
  l.id = cur.take("id").value;
  l.product = cur.take("product").value;
  l.customer = cur.take("customer").value;
  l.features = split(cur.take("features").value, ',');
  l.max_gpus = parse_u32(cur.take("max_gpus"), kMaxGpusLimit);
  l.issued = parse_date_field(cur.take("issued"));
  l.not_before = parse_date_field(cur.take("not_before"));
  l.expires = parse_date_field(cur.take("expires"));
  l.grace_days = parse_u32(cur.take("grace_days"), kMaxGraceDays);
  const Field& binding = cur.take("binding");
  if (binding.value == "hardware") {
    l.hw_max_changed = parse_u32(cur.take("hw_max_changed"), 1000);
    for (const Field* f : cur.take_repeated("hw")) l.hw.push_back(parse_component(f->value, f->line));
  } else if (binding.value == "floating") {
    l.floating = true;
  } else {
    throw FormatError("line " + std::to_string(binding.line) + ": binding must be 'hardware' or 'floating'");
  }
  if (const Field* n = cur.take_optional("activation_nonce")) l.activation_nonce = n->value;
  SignedTail tail = take_signed_tail(cur, text);
  l.key_id = std::move(tail.key_id);
  validate(l);
  s.signature = std::move(tail.signature);
  s.payload = std::move(tail.payload);
  // Every field parsed; now the bytes must be the one canonical spelling of them.
  if (canonical_payload(l) != s.payload) throw FormatError("licence is not in canonical form (re-encoded?)");
  return s;
}

SignatureCheck check_signature(const SignedLicense& l, const PublicKey& trusted) {
  // Verify first, unconditionally; key_id only sharpens the message afterwards.
  if (trusted.verify(l.payload, l.signature)) return SignatureCheck::kValid;
  return l.license.key_id != trusted.key_id() ? SignatureCheck::kWrongKey : SignatureCheck::kInvalid;
}

std::string new_license_id() { return to_hex(random_bytes(8)); }

}  // namespace licensing
