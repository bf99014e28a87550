#include "licensing/revocation.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "licensing/encoding.hpp"
#include "licensing/record.hpp"

namespace licensing {
namespace {

bool sorted_unique_hex(const std::vector<std::string>& v) {
  return std::adjacent_find(v.begin(), v.end(), std::greater_equal<>()) == v.end() &&
         std::all_of(v.begin(), v.end(), [](const std::string& s) { return is_lower_hex(s, 16); });
}

std::string payload_of(const Revocations& r) {
  std::string out = format_field("gpulab-revocations", "1");
  out += format_field("serial", std::to_string(r.serial));
  out += format_field("issued", format_date(r.issued));
  for (const auto& id : r.licences) out += format_field("licence", id);
  for (const auto& id : r.keys) out += format_field("key", id);
  out += format_field("key_id", r.key_id);
  return out;
}

}  // namespace

bool Revocations::revokes_licence(std::string_view id) const {
  return std::binary_search(licences.begin(), licences.end(), id);
}

bool Revocations::revokes_key(std::string_view id) const { return std::binary_search(keys.begin(), keys.end(), id); }

std::string sign_revocations(Revocations r, const PrivateKey& key) {
  std::sort(r.licences.begin(), r.licences.end());
  r.licences.erase(std::unique(r.licences.begin(), r.licences.end()), r.licences.end());
  std::sort(r.keys.begin(), r.keys.end());
  r.keys.erase(std::unique(r.keys.begin(), r.keys.end()), r.keys.end());
  if (!sorted_unique_hex(r.licences) || !sorted_unique_hex(r.keys)) {
    throw gpulab::UsageError("licence and key ids are 16 lowercase hex digits");
  }
  if (r.serial > kMaxRevocationSerial) throw gpulab::UsageError("serial must be at most 2^53");
  r.key_id = key.public_key().key_id();
  const std::string payload = payload_of(r);
  return payload + format_field("signature", to_base64(key.sign(payload)));
}

Revocations parse_revocations(std::string_view text) {
  if (text.size() > kMaxRevocationBytes) throw FormatError("revocation list larger than 256 KiB");
  const auto fields = parse_record(text);
  FieldCursor cur(fields, "revocation list");
  const Field& magic = cur.take("gpulab-revocations");
  if (magic.value != "1") throw FormatError("line 1: unsupported revocation list format '" + magic.value + "'");
  Revocations r;
  r.serial = uint_field(cur.take("serial"), kMaxRevocationSerial);
  r.issued = date_field(cur.take("issued"));
  for (const Field* f : cur.take_repeated("licence")) r.licences.push_back(f->value);
  for (const Field* f : cur.take_repeated("key")) r.keys.push_back(f->value);
  if (!sorted_unique_hex(r.licences) || !sorted_unique_hex(r.keys)) {
    throw FormatError("revoked licence and key ids must be 16 lowercase hex digits, sorted and unique");
  }
  SignedTail tail = take_signed_tail(cur, text);
  r.key_id = std::move(tail.key_id);
  r.payload = std::move(tail.payload);
  r.signature = std::move(tail.signature);
  if (payload_of(r) != r.payload) throw FormatError("revocation list is not in canonical form (re-encoded?)");
  return r;
}

void verify_revocations(const Revocations& r, const Keyring& trusted) {
  const TrustedKey* signer = trusted.find(r.key_id);
  if (signer == nullptr) {
    throw gpulab::UsageError(
        fmt::format("revocation list signed by key {}, which is not a trusted vendor key ({})", r.key_id, trusted.ids()));
  }
  if (!signer->key.verify(r.payload, r.signature)) {
    throw gpulab::UsageError("revocation list signature does not match its contents (edited after signing?)");
  }
  if (!signer->trusted_on(r.issued)) {
    throw gpulab::UsageError(fmt::format("revocation list issued {} by key {}, which is trusted only {}",
                                         format_date(r.issued), signer->id, signer->window()));
  }
  for (const auto& id : r.keys) {
    const TrustedKey* k = trusted.find(id);
    if (k != nullptr && k->valid_from > signer->valid_from) {
      throw gpulab::UsageError(fmt::format("revocation list signed by key {} revokes the newer key {}: refused "
                                           "(a list may revoke only keys no newer than its signer)",
                                           signer->id, id));
    }
  }
}

}  // namespace licensing
