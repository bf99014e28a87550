#include "licensing/ek_commands.hpp"

#include <fmt/format.h>

#include <filesystem>

#include "gpulab/errors.hpp"
#include "gpulab/json.hpp"
#include "licensing/ed25519.hpp"
#include "licensing/ek_enrolment.hpp"
#include "licensing/license.hpp"
#include "licensing/record.hpp"
#include "licensing/reports.hpp"
#include "licensing/secure_file.hpp"
#include "licensing/tpm_tools.hpp"

namespace licensing {
namespace {

// One of the round trip's files, parsed; a malformed one is one error line naming it.
template <typename Parse>
auto parse_file(const std::string& path, Parse parse) {
  const std::string text = read_file_limited(path, kMaxRecordBytes);
  try {
    return parse(text);
  } catch (const FormatError& e) {
    throw gpulab::UsageError(fmt::format("{}: {}", path, e.what()));
  }
}

void refuse_same_file(const std::string& a, std::string_view a_flag, const std::string& b,
                      std::string_view b_flag) {
  namespace fs = std::filesystem;
  if (fs::absolute(a).lexically_normal() == fs::absolute(b).lexically_normal())
    throw gpulab::UsageError(fmt::format("{} and {} name the same file ({})", a_flag, b_flag, a));
}

std::string short_hex(const Bytes& b) {
  return to_hex(b).substr(0, 16);
}

}  // namespace

EkCommands::EkCommands(CLI::App& app) : tcti_(default_tcti()) {
  const std::string tcti_help =
      "TPM to use (tpm2-tools TCTI; default $TPM2TOOLS_TCTI or the kernel's)";
  request_ = app.add_subcommand(
      "attest-ek-request",
      "Customer, in a known-good state: write an EK enrolment request (the TPM's EK certificate, "
      "attestation key and PCR values) for the vendor to certify");
  request_->add_option("--license", license_, "The entitlement licence the policy is for")
      ->required();
  request_
      ->add_option("--pcrs", pcrs_, "PCRs to record, BANK:N,N,... (sha256 only, 0..23 ascending)")
      ->required();
  request_->add_option("--tcti", tcti_, tcti_help)->capture_default_str();
  request_->add_option("--out", out_, "EK enrolment request to write")->required();

  challenge_ = app.add_subcommand(
      "attest-ek-challenge",
      "Vendor: verify an EK enrolment request against the TPM vendor's CA and wrap a fresh secret "
      "that only that TPM, holding that attestation key, can unwrap");
  challenge_->add_option("request", input_, "EK enrolment request (attest-ek-request)")
      ->required();
  challenge_->add_option("--ek-ca", ek_ca_, "TPM vendor CA certificates (PEM)")->required();
  challenge_
      ->add_option("--pending", pending_,
                   "Vendor-side record to write and keep for attest-ek-certify (the secret's "
                   "hash, never the secret)")
      ->required();
  challenge_->add_option("--out", out_, "Credential challenge to write and send")->required();
  challenge_->add_option("--today", today_, "Issue date (default: today)");

  answer_ = app.add_subcommand(
      "attest-ek-answer",
      "Customer: unwrap the vendor's credential challenge with this TPM "
      "(tpm2_activatecredential)");
  answer_->add_option("challenge", input_, "Credential challenge (attest-ek-challenge)")
      ->required();
  answer_->add_option("--tcti", tcti_, tcti_help)->capture_default_str();
  answer_->add_option("--out", out_, "Answer to write and carry back")->required();

  certify_ = app.add_subcommand(
      "attest-ek-certify",
      "Vendor: check an answer against the pending record and write the signed, ek-certified "
      "attestation policy that sign-activation accepts");
  certify_->add_option("answer", input_, "Answer (attest-ek-answer)")->required();
  certify_
      ->add_option("--pending", pending_,
                   "The record attest-ek-challenge kept (consumed on success)")
      ->required();
  certify_->add_option("--key", key_, "Vendor private key: signs the policy")->required();
  certify_->add_option("--out", out_, "Attestation policy to write")->required();
  certify_->add_option("--today", today_, "Check date (default: today)");
}

std::optional<int> EkCommands::run(Date today, bool json) const {
  if (!today_.empty()) today = date_arg(today_, "--today");
  if (*request_) return request(today, json);
  if (*challenge_) return challenge(today, json);
  if (*answer_) return answer(json);
  if (*certify_) return certify(today, json);
  return std::nullopt;
}

int EkCommands::request(Date today, bool json) const {
  const PcrSelection sel = parse_pcr_selection(pcrs_, "--pcrs");
  const SignedLicense ent = parse_license(read_file_limited(license_, kMaxLicenseBytes));
  const TpmTools tpm(tcti_);
  const TpmTools::AkArea ak = tpm.ak_area();
  // The certificate as the vendor will read it back: DER re-encoded from its one PEM spelling.
  const Bytes ek_der = ek_certificate_der(ek_certificate_pem(tpm.ek_certificate()));
  EkEnrolRequest r{ent.license.id, ek_der, ak.tpm_public, ak.name, sel, tpm.pcr_values(sel), today};
  write_file_atomic(out_, format_ek_request(r), kPublicMode);
  if (json) {
    gpulab::print_json({{"request", out_},
                        {"id", r.license_id},
                        {"ak_name", to_hex(r.ak_name)},
                        {"pcrs", format_pcr_selection(sel)}});
  } else {
    fmt::print(
        "wrote {}: EK certificate, attestation key (name {}...) and PCRs {} for licence {}; carry "
        "it to the vendor (attest-ek-challenge)\n",
        out_, short_hex(r.ak_name), format_pcr_selection(sel), r.license_id);
  }
  return gpulab::kExitOk;
}

int EkCommands::challenge(Date today, bool json) const {
  refuse_same_file(out_, "--out", pending_, "--pending");
  const EkEnrolRequest request = parse_file(input_, parse_ek_request);
  const EkCaStore cas(ek_ca_);
  const EkChallengeMade made = make_ek_challenge(request, cas, today, input_);
  // The pending record first: a challenge the vendor could not check later must not go out.
  write_file_atomic(pending_, format_ek_pending(made.pending), kSecretMode);
  try {
    write_file_atomic(out_, format_ek_challenge(made.challenge), kPublicMode);
  } catch (...) {
    std::error_code ignored;
    std::filesystem::remove(pending_, ignored);
    throw;
  }
  const std::string& id = made.challenge.challenge_id;
  if (json) {
    gpulab::print_json({{"challenge", out_},
                        {"pending", pending_},
                        {"id", request.license_id},
                        {"challenge_id", id},
                        {"ak_sha256", made.pending.ak_sha256},
                        {"ek_sha256", made.pending.ek_sha256}});
  } else {
    fmt::print(
        "{}: EK certificate verified against {}; attestation key {}... is a restricted fixedTPM "
        "P-256 signing key named {}...\n"
        "wrote {}: credential for challenge {}..., only that TPM can open it; send it to the "
        "customer (attest-ek-answer)\n"
        "wrote {}: keep it for attest-ek-certify (it holds the secret's sha256, not the secret)\n",
        input_, ek_ca_, made.pending.ak_sha256.substr(0, 16), short_hex(made.challenge.ak_name),
        out_, id.substr(0, 8), pending_);
  }
  return gpulab::kExitOk;
}

int EkCommands::answer(bool json) const {
  const EkChallenge c = parse_file(input_, parse_ek_challenge);
  const TpmTools tpm(tcti_);
  // Checked first for a clear message; the TPM would refuse anyway (another
  // TPM cannot unwrap the credential, and this one only for that name).
  const Bytes name = tpm.ak_area().name;
  if (name != c.ak_name) {
    throw gpulab::UsageError(fmt::format(
        "{} is for the attestation key named {}..., this TPM's is {}...: a challenge made for "
        "another TPM",
        input_, short_hex(c.ak_name), short_hex(name)));
  }
  Bytes secret;
  try {
    secret = tpm.activate_credential(c.credential);
  } catch (const gpulab::RunError& e) {
    throw gpulab::UsageError(fmt::format(
        "{}: this TPM cannot activate the credential (wrapped for another TPM's EK, or edited): {}",
        input_, e.what()));
  }
  if (secret.size() != kEkSecretBytes) {
    throw gpulab::UsageError(fmt::format("{}: the credential holds {} bytes, not a {}-byte secret",
                                         input_, secret.size(), kEkSecretBytes));
  }
  write_file_atomic(out_, format_ek_answer({c.license_id, c.challenge_id, secret}), kSecretMode);
  if (json) {
    gpulab::print_json({{"answer", out_}, {"id", c.license_id}, {"challenge_id", c.challenge_id}});
  } else {
    fmt::print(
        "wrote {}: this TPM activated the credential of challenge {}...; carry it to the vendor "
        "(attest-ek-certify)\n",
        out_, c.challenge_id.substr(0, 8));
  }
  return gpulab::kExitOk;
}

int EkCommands::certify(Date today, bool json) const {
  refuse_same_file(out_, "--out", pending_, "--pending");
  const EkAnswer a = parse_file(input_, parse_ek_answer);
  const EkPending pending = parse_file(pending_, parse_ek_pending);
  const PrivateKey key = PrivateKey::load(key_);
  const AttestPolicy p = certify_ek_answer(a, pending, today, input_);
  write_file_atomic(out_, sign_policy(p, key), kPublicMode);
  std::filesystem::remove(pending_);  // one answer per challenge
  const std::string key_id = key.public_key().key_id();
  if (json) {
    gpulab::print_json({{"policy", out_},
                        {"id", p.license_id},
                        {"ak_sha256", p.ak_sha256},
                        {"pcrs", format_pcr_selection(p.selection)},
                        {"ak_trust", std::string(ak_trust_name(p.trust))},
                        {"key_id", key_id}});
  } else {
    fmt::print(
        "wrote {}: attestation key {}... ek-certified for licence {}, PCRs {} golden, signed by "
        "vendor key {}; {} used up\n",
        out_, p.ak_sha256.substr(0, 16), p.license_id, format_pcr_selection(p.selection), key_id,
        pending_);
  }
  return gpulab::kExitOk;
}

}  // namespace licensing
