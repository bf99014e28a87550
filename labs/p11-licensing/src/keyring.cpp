#include "licensing/keyring.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "gpulab/text.hpp"
#include "licensing/encoding.hpp"
#include "licensing/record.hpp"
#include "licensing/secure_file.hpp"

namespace licensing {
namespace {

constexpr std::size_t kMaxKeyringBytes = 64 * 1024;

Bytes raw_key_field(const Field& f, std::string_view text) {
  auto raw = from_base64(text);
  if (!raw || raw->size() != 32) {
    throw FormatError("line " + std::to_string(f.line) + ": " + f.key + " must be a 32-byte key in canonical base64");
  }
  return *raw;
}

std::string rotation_payload(const Bytes& new_key, Date from, std::optional<Date> retire, std::string_view signer) {
  std::string out = format_field("gpulab-key-rotation", "1");
  out += format_field("new_key", to_base64(new_key));
  out += format_field("valid_from", format_date(from));
  if (retire) out += format_field("retire_signer", format_date(*retire));
  out += format_field("key_id", signer);
  return out;
}

}  // namespace

std::string TrustedKey::window() const {
  return valid_until ? fmt::format("from {} until {}", format_date(valid_from), format_date(*valid_until))
                     : fmt::format("from {}", format_date(valid_from));
}

std::string sign_key_rotation(const PrivateKey& old_key, const PublicKey& new_key, Date valid_from,
                              std::optional<Date> retire_old) {
  if (retire_old && *retire_old < valid_from) {
    throw gpulab::UsageError("--retire-old must not be before --valid-from: the two keys' windows would leave a gap");
  }
  const PublicKey signer = old_key.public_key();
  if (signer.key_id() == new_key.key_id()) throw gpulab::UsageError("the new key is the signing key itself");
  const std::string payload = rotation_payload(new_key.raw(), valid_from, retire_old, signer.key_id());
  return payload + format_field("signature", to_base64(old_key.sign(payload)));
}

KeyRotation parse_key_rotation(std::string_view text) {
  if (text.size() > kMaxRecordBytes) throw FormatError("key rotation statement larger than 64 KiB");
  const auto fields = parse_record(text);
  FieldCursor cur(fields, "key rotation");
  const Field& magic = cur.take("gpulab-key-rotation");
  if (magic.value != "1") throw FormatError("line 1: unsupported key rotation format '" + magic.value + "'");
  KeyRotation r;
  const Field& nk = cur.take("new_key");
  r.new_key = raw_key_field(nk, nk.value);
  r.valid_from = date_field(cur.take("valid_from"));
  if (const Field* f = cur.take_optional("retire_signer")) r.retire_signer = date_field(*f);
  SignedTail tail = take_signed_tail(cur, text);
  r.key_id = std::move(tail.key_id);
  r.payload = std::move(tail.payload);
  r.signature = std::move(tail.signature);
  if (rotation_payload(r.new_key, r.valid_from, r.retire_signer, r.key_id) != r.payload) {
    throw FormatError("key rotation statement is not in canonical form (re-encoded?)");
  }
  return r;
}

Keyring Keyring::of(PublicKey key, Date valid_from) {
  Keyring k;
  std::string id = key.key_id();
  k.keys_.push_back(TrustedKey{std::move(key), std::move(id), valid_from, std::nullopt});
  return k;
}

Keyring Keyring::load(const std::filesystem::path& path) {
  const std::string text = read_file_limited(path, kMaxKeyringBytes);
  if (text.rfind("-----BEGIN", 0) == 0) return of(PublicKey::from_pem(text));
  if (text.rfind("gpulab-keyring:", 0) != 0) {
    throw FormatError(path.string() +
                      ": neither a PEM Ed25519 public key ('BEGIN PUBLIC KEY') nor a keyring ('gpulab-keyring: 1')");
  }
  try {
    return parse(text);
  } catch (const FormatError& e) {
    throw FormatError(path.string() + ": " + e.what());
  }
}

// gpulab-keyring: 1
// key: <key id> <raw key, base64> <valid from> <valid until, or "-">
Keyring Keyring::parse(std::string_view text) {
  const auto fields = parse_record(text);
  FieldCursor cur(fields, "keyring");
  const Field& magic = cur.take("gpulab-keyring");
  if (magic.value != "1") throw FormatError("line 1: unsupported keyring format '" + magic.value + "'");
  Keyring k;
  for (const Field* f : cur.take_repeated("key")) {
    const auto bad = [&](std::string_view why) {
      return FormatError("line " + std::to_string(f->line) + ": key " + std::string(why));
    };
    const auto words = gpulab::split_fields(f->value, ' ');
    const std::vector<std::string> parts(words.begin(), words.end());
    if (parts.size() != 4) throw bad("must be '<key id> <base64 key> <valid from> <valid until or ->'");
    PublicKey key = PublicKey::from_raw(raw_key_field(*f, parts[1]));
    if (key.key_id() != parts[0]) throw bad("id " + parts[0] + " is not the id of its key (" + key.key_id() + ")");
    const auto from = parse_date(parts[2]);
    const auto until = parts[3] == "-" ? std::optional<Date>{} : parse_date(parts[3]);
    if (!from || (parts[3] != "-" && !until)) throw bad("dates must be YYYY-MM-DD (until may be '-')");
    if (until && *until < *from) throw bad("window ends before it starts");
    if (k.find(parts[0]) != nullptr) throw bad(parts[0] + " is listed twice");
    k.keys_.push_back(TrustedKey{std::move(key), parts[0], *from, until});
  }
  cur.expect_end();
  if (k.keys_.empty()) throw FormatError("keyring trusts no key");
  return k;
}

std::string Keyring::format() const {
  std::string out = format_field("gpulab-keyring", "1");
  for (const auto& k : keys_) {
    out += format_field("key", fmt::format("{} {} {} {}", k.id, to_base64(k.key.raw()), format_date(k.valid_from),
                                           k.valid_until ? format_date(*k.valid_until) : "-"));
  }
  return out;
}

const TrustedKey* Keyring::find(std::string_view key_id) const {
  const auto it = std::find_if(keys_.begin(), keys_.end(), [&](const TrustedKey& k) { return k.id == key_id; });
  return it == keys_.end() ? nullptr : &*it;
}

std::string Keyring::ids() const {
  std::string out;
  for (const auto& k : keys_) out += (out.empty() ? "" : ", ") + k.id;
  return out;
}

void Keyring::apply(const KeyRotation& r) {
  TrustedKey* signer = nullptr;
  for (auto& k : keys_) signer = k.id == r.key_id ? &k : signer;
  if (signer == nullptr) {
    throw gpulab::UsageError(fmt::format("key rotation signed by key {}, which this keyring does not trust ({})", r.key_id, ids()));
  }
  if (!signer->key.verify(r.payload, r.signature)) {
    throw gpulab::UsageError("key rotation signature does not match its contents (edited after signing?)");
  }
  if (!signer->trusted_on(r.valid_from)) {
    throw gpulab::UsageError(fmt::format("key rotation for {} is signed by key {}, which is trusted only {}",
                                         format_date(r.valid_from), signer->id, signer->window()));
  }
  PublicKey added = PublicKey::from_raw(r.new_key);
  std::string id = added.key_id();
  if (find(id) != nullptr) throw gpulab::UsageError("key " + id + " is already in the keyring");
  if (r.retire_signer) signer->valid_until = std::min(*r.retire_signer, signer->valid_until.value_or(*r.retire_signer));
  keys_.push_back(TrustedKey{std::move(added), std::move(id), r.valid_from, std::nullopt});
}

}  // namespace licensing
