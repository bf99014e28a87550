#include "licensing/trust_commands.hpp"

#include <fmt/format.h>

#include "gpulab/errors.hpp"
#include "licensing/keyring.hpp"
#include "licensing/record.hpp"
#include "licensing/reports.hpp"
#include "licensing/revocation.hpp"
#include "licensing/secure_file.hpp"

namespace licensing {
namespace {

// An optional date flag: `fallback` when not given, else date_arg's check.
Date date_option(const std::string& text, std::string_view flag, Date fallback) {
  return text.empty() ? fallback : date_arg(text, flag);
}

}  // namespace

TrustCommands::TrustCommands(CLI::App& app) {
  rotate_key_ = app.add_subcommand("rotate-key", "Vendor: sign a statement that a new key is trusted from a date");
  rotate_key_->add_option("--key", key_file_, "The current (old) vendor private key")->required();
  rotate_key_->add_option("--new-public-key", new_public_key_, "The new key's public half (from keygen)")->required();
  rotate_key_->add_option("--valid-from", valid_from_, "First day the new key signs, YYYY-MM-DD (default: today)");
  rotate_key_->add_option("--retire-old", retire_old_, "Last day the old key signs, YYYY-MM-DD (default: it stays)");
  rotate_key_->add_option("--out", out_, "Rotation statement to write")->required();

  revoke_ = app.add_subcommand("revoke", "Vendor: sign a revocation list of licences and keys");
  revoke_->add_option("--key", key_file_, "Vendor private key")->required();
  revoke_->add_option("--serial", serial_, "List number; a newer list carries a larger one")
      ->required()
      ->check(CLI::Range(std::uint64_t{1}, kMaxRevocationSerial));
  revoke_->add_option("--licence", licences_, "Licence id to revoke (repeatable)");
  revoke_->add_option("--key-id", key_ids_, "Vendor key id to revoke (repeatable)");
  revoke_->add_option("--issued", valid_from_, "Issue date of the list, YYYY-MM-DD (default: today)");
  revoke_->add_option("--out", out_, "Revocation list to write")->required();

  keyring_init_ = app.add_subcommand("keyring-init", "Site: start a keyring from the vendor public key shipped with the product");
  keyring_init_->add_option("public-key", public_key_, "Vendor public key (PEM)")->required();
  keyring_init_->add_option("--valid-from", valid_from_, "First issue date it is trusted for (default: 1970-01-01)");
  keyring_init_->add_option("--out", out_, "Keyring file to create (never overwritten)")->required();

  keyring_rotate_ =
      app.add_subcommand("keyring-rotate", "Site: verify a rotation statement offline and add its key to the keyring");
  keyring_rotate_->add_option("statement", rotation_file_, "Rotation statement from the vendor")->required();
  keyring_rotate_->add_option("--keyring", keyring_, "Keyring to update (atomically)")->required();
}

std::optional<int> TrustCommands::run(Date today) const {
  if (*rotate_key_) {
    const PrivateKey old_key = PrivateKey::load(key_file_);
    const PublicKey new_key = PublicKey::load(new_public_key_);
    const Date from = date_option(valid_from_, "--valid-from", today);
    const auto retire = retire_old_.empty() ? std::optional<Date>{} : date_option(retire_old_, "--retire-old", today);
    write_file_atomic(out_, sign_key_rotation(old_key, new_key, from, retire), kPublicMode);
    fmt::print("rotation statement {}: key {} vouches for key {} from {}{}\n", out_, old_key.public_key().key_id(),
               new_key.key_id(), format_date(from), retire ? "; it retires after " + format_date(*retire) : "");
    return gpulab::kExitOk;
  }
  if (*revoke_) {
    const PrivateKey key = PrivateKey::load(key_file_);
    Revocations r;
    r.serial = serial_;
    r.issued = date_option(valid_from_, "--issued", today);
    r.licences = licences_;
    r.keys = key_ids_;
    const std::string text = sign_revocations(r, key);
    const Revocations written = parse_revocations(text);  // what a site will read, before it is written
    write_file_atomic(out_, text, kPublicMode);
    fmt::print("revocation list {}: serial {}, {} licence(s) and {} key(s) revoked, signed by key {}\n", out_,
               written.serial, written.licences.size(), written.keys.size(), written.key_id);
    return gpulab::kExitOk;
  }
  if (*keyring_init_) {
    const Keyring ring = Keyring::of(PublicKey::load(public_key_), date_option(valid_from_, "--valid-from", Date{0}));
    write_file_atomic(out_, ring.format(), kPublicMode, Overwrite::kNo);
    fmt::print("keyring {}: trusts key {} {}\n", out_, ring.keys().front().id, ring.keys().front().window());
    return gpulab::kExitOk;
  }
  if (*keyring_rotate_) {
    Keyring ring = Keyring::load(keyring_);
    const KeyRotation r = parse_key_rotation(read_file_limited(rotation_file_, kMaxRecordBytes));
    ring.apply(r);
    write_file_atomic(keyring_, ring.format(), kPublicMode);
    fmt::print("keyring {}:\n", keyring_);
    for (const auto& k : ring.keys()) fmt::print("  key {} {}\n", k.id, k.window());
    return gpulab::kExitOk;
  }
  return std::nullopt;
}

}  // namespace licensing
