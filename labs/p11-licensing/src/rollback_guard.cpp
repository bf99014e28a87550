#include "licensing/rollback_guard.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <system_error>

#include "gpulab/errors.hpp"
#include "licensing/digest.hpp"
#include "licensing/record.hpp"
#include "licensing/secure_file.hpp"

namespace licensing {

namespace {

// Not a secret from anyone with the binary (see the header); it binds the tag
// to this program and, through the signature, to this one licence.
constexpr std::string_view kStateKeyLabel = "gpulab-p11 last-seen state key v1";

Digest state_key(const SignedLicense& lic) {
  std::string material(kStateKeyLabel);
  material.push_back('\0');
  material.append(reinterpret_cast<const char*>(lic.signature.data()), lic.signature.size());
  return sha256(material);
}

std::string body(const std::string& id, std::int64_t last_seen) {
  return format_field("gpulab-license-state", "1") + format_field("license_id", id) +
         format_field("last_seen", std::to_string(last_seen));
}

}  // namespace

RollbackGuard::Stored RollbackGuard::load(const SignedLicense& lic) const {
  namespace fs = std::filesystem;
  Stored s;
  std::error_code ec;
  const fs::file_status st = fs::status(path_, ec);
  // Nothing there, or a device or pipe (--state /dev/null keeps no record): no last-seen time.
  if (!fs::exists(st) || fs::is_character_file(st) || fs::is_fifo(st)) return s;
  // A path that cannot hold a record, or a file that is not one, is the user's mistake to be
  // told about, not clock tampering: only a state record whose tag fails counts as edited.
  const auto wrong = [](const std::string& why) { return gpulab::UsageError("last-seen state: " + why); };
  std::string text;
  try {
    text = read_file_limited(path_, 4096);
  } catch (const gpulab::UsageError& e) {
    throw wrong(e.what());
  }
  const std::string name = "'" + path_.string() + "'";
  if (text.empty()) throw wrong(name + " is empty, not a state record (delete it to start a new one)");
  if (text.rfind("gpulab-license-state:", 0) != 0) {
    throw wrong(name + " is not a state record (those start with 'gpulab-license-state:')");
  }
  s.present = true;
  try {
    const auto fields = parse_record(text);
    FieldCursor cur(fields, "state file");
    if (cur.take("gpulab-license-state").value != "1") return s;
    const std::string id = cur.take("license_id").value;
    const auto seen = parse_uint(cur.take("last_seen").value, 1ull << 40);
    const Field& tag = cur.take("tag");
    cur.expect_end();
    s.same_license = id == lic.license.id;
    if (!s.same_license || !seen) return s;
    const Digest expect = hmac_sha256(state_key(lic), body(id, static_cast<std::int64_t>(*seen)));
    const auto got = from_hex(tag.value);
    s.tag_ok = got && got->size() == expect.size() && constant_time_equal(got->data(), expect.data(), expect.size());
    s.last_seen = static_cast<std::int64_t>(*seen);
  } catch (const gpulab::UsageError&) {
    // Unparseable counts as tampered: present, tag not ok.
    s.same_license = true;
  }
  return s;
}

std::optional<std::string> RollbackGuard::check(const SignedLicense& lic, std::int64_t now) const {
  const Stored s = load(lic);
  if (!s.present || !s.same_license) return std::nullopt;  // first use of this licence here
  if (!s.tag_ok) {
    return fmt::format("last-seen record {} fails its integrity check (edited?)", path_.string());
  }
  if (now + tolerance_s_ < s.last_seen) {
    return fmt::format("system clock ({}) is behind the last time this licence was checked ({}) by {}",
                       format_date(date_of(now)), format_date(date_of(s.last_seen)),
                       s.last_seen - now >= kSecondsPerDay
                           ? fmt::format("{} days", (s.last_seen - now) / kSecondsPerDay)
                           : fmt::format("{} s", s.last_seen - now));
  }
  return std::nullopt;
}

std::optional<std::int64_t> RollbackGuard::last_seen(const SignedLicense& lic) const {
  const Stored s = load(lic);
  if (s.present && s.same_license && s.tag_ok) return s.last_seen;
  return std::nullopt;
}

void RollbackGuard::record(const SignedLicense& lic, std::int64_t now) const {
  const Stored s = load(lic);
  const std::int64_t seen = (s.tag_ok && s.same_license) ? std::max(s.last_seen, now) : now;
  const std::string b = body(lic.license.id, seen);
  const Digest tag = hmac_sha256(state_key(lic), b);
  write_file_atomic(path_, b + format_field("tag", to_hex(tag.data(), tag.size())), kSecretMode);
}

}  // namespace licensing
