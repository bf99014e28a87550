#include "licensing/attest_commands.hpp"

#include <fmt/format.h>

#include <filesystem>

#include "gpulab/errors.hpp"
#include "gpulab/json.hpp"
#include "licensing/attestation.hpp"
#include "licensing/record.hpp"
#include "licensing/secure_file.hpp"
#include "licensing/tpm_tools.hpp"

namespace licensing {

void attach_quote(ActivationRequest& request, const QuoteSource& source) {
  if (source.challenge_file.empty()) return;
  const AttestChallenge c =
      parse_challenge(read_file_limited(source.challenge_file, kMaxRecordBytes));
  if (c.license_id != request.license_id) {
    throw gpulab::UsageError(fmt::format("{} is a challenge for licence {}, the entitlement is {}",
                                         source.challenge_file, c.license_id, request.license_id));
  }
  request.nonce = c.nonce;
  request.quote = TpmTools(source.tcti).quote(c.selection, *from_hex(c.nonce));
}

void check_quote(const ActivationRequest& request, const QuoteCheck& check,
                 const PublicKey& vendor) {
  if (check.policy_file.empty()) return;
  const AttestPolicy policy = parse_policy(read_file_limited(check.policy_file, kMaxRecordBytes));
  check_policy_trust(policy, vendor, check.require_ek_certified, check.policy_file);
  const AttestChallenge c =
      parse_challenge(read_file_limited(check.challenge_file, kMaxRecordBytes));
  verify_attested_request(request, policy, check.policy_file, c);
}

void consume_challenge(const QuoteCheck& check) {
  if (!check.challenge_file.empty()) std::filesystem::remove(check.challenge_file);
}

AttestCommands::AttestCommands(CLI::App& app) : tcti_(default_tcti()) {
  enroll_ = app.add_subcommand(
      "attest-enroll",
      "Customer, in a known-good state: record this TPM's attestation key and PCR values as the "
      "golden policy for the vendor, the key trusted on first use (attest-ek-request has the "
      "vendor certify it through the TPM's EK instead)");
  enroll_->add_option("--license", license_, "The entitlement licence the policy is for")
      ->required();
  enroll_
      ->add_option("--pcrs", pcrs_, "PCRs to record, BANK:N,N,... (sha256 only, 0..23 ascending)")
      ->required();
  enroll_
      ->add_option("--tcti", tcti_,
                   "TPM to use (tpm2-tools TCTI; default $TPM2TOOLS_TCTI or the kernel's)")
      ->capture_default_str();
  enroll_->add_option("--out", out_, "Attestation policy to write")->required();

  challenge_ = app.add_subcommand(
      "attest-challenge",
      "Vendor: a fresh nonce for the machine to quote (keep a copy for sign-activation)");
  challenge_->add_option("--policy", policy_, "Attestation policy from attest-enroll")->required();
  challenge_->add_option("--out", out_, "Challenge to write")->required();
}

std::optional<int> AttestCommands::run(Date today, bool json) const {
  if (*enroll_) {
    const PcrSelection sel = parse_pcr_selection(pcrs_, "--pcrs");
    const SignedLicense ent = parse_license(read_file_limited(license_, kMaxLicenseBytes));
    const TpmTools tpm(tcti_);
    const Bytes ak = tpm.ak_public();
    AttestPolicy p{ent.license.id, ak_fingerprint(ak), sel, tpm.pcr_values(sel)};
    write_file_atomic(out_, format_policy(p), kPublicMode);
    if (json) {
      gpulab::print_json({{"policy", out_},
                          {"id", p.license_id},
                          {"ak_sha256", p.ak_sha256},
                          {"pcrs", format_pcr_selection(sel)},
                          {"ak_trust", std::string(ak_trust_name(p.trust))}});
    } else {
      fmt::print(
          "wrote {}: attestation key {}... and PCRs {} recorded as golden for licence {}; carry it "
          "to the vendor\nattestation key: trusted on first use (ak_trust: first-use; "
          "attest-ek-request has it certified through the TPM's EK)\n",
          out_, p.ak_sha256.substr(0, 16), format_pcr_selection(sel), p.license_id);
    }
    return gpulab::kExitOk;
  }
  if (*challenge_) {
    const AttestPolicy p = parse_policy(read_file_limited(policy_, kMaxRecordBytes));
    const AttestChallenge c = make_challenge(p, today);
    write_file_atomic(out_, format_challenge(c), kPublicMode);
    if (json) {
      gpulab::print_json(
          {{"challenge", out_}, {"id", c.license_id}, {"pcrs", format_pcr_selection(c.selection)}});
    } else {
      fmt::print(
          "wrote {}: nonce {}... for licence {}, PCRs {}; send a copy, keep this one for "
          "sign-activation\n",
          out_, c.nonce.substr(0, 8), c.license_id, format_pcr_selection(c.selection));
    }
    return gpulab::kExitOk;
  }
  return std::nullopt;
}

}  // namespace licensing
