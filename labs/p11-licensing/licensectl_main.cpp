// licensectl: Ed25519-signed, hardware-bound licences that work without a
// licence server — vendor commands (keygen, issue, sign-activation) and
// customer commands (status, activate-request, activate), plus a demo. What
// each command does and prints is in licensing/reports.hpp.
#include <fmt/core.h>

#include "gpulab/cli.hpp"
#include "gpulab/json.hpp"
#include "gpulab/metrics_out.hpp"
#include "licensing/ek_commands.hpp"
#include "licensing/license_metrics.hpp"
#include "licensing/reports.hpp"
#include "licensing/tpm_tools.hpp"
#include "licensing/trust_commands.hpp"

using namespace licensing;

int main(int argc, char** argv) {
  CLI::App app{
      "licensectl: offline licences - Ed25519-signed, hardware-bound with fuzzy matching, grace "
      "periods,\n"
      "clock-rollback detection and air-gapped activation by file round trip. No network code "
      "path."};
  app.require_subcommand(1);
  gpulab::CommonOptions common;
  gpulab::add_json_flag(app, common);

  // keygen
  auto* keygen = app.add_subcommand(
      "keygen", "Vendor: create an Ed25519 signing key pair (PREFIX.key 0600, PREFIX.pub)");
  std::string key_prefix = "vendor";
  bool force = false;
  keygen->add_option("--out", key_prefix, "Path prefix of the two key files")
      ->capture_default_str();
  keygen->add_flag("--force", force, "Replace existing key files");

  // issue
  auto* issue = app.add_subcommand("issue", "Vendor: sign a licence");
  IssueOptions io;
  std::string& key_file = io.key_file;
  std::string& out = io.out;
  int& max_changed = io.max_changed;
  issue->add_option("--key", key_file, "Vendor private key (from keygen)")->required();
  issue->add_option("--customer", io.customer, "Customer name (UTF-8)")->required();
  issue->add_option("--product", io.product, "Product name")->capture_default_str();
  issue->add_option("--features", io.features, "Comma-separated features, e.g. batching,kv-offload")
      ->required();
  issue->add_option("--max-gpus", io.max_gpus, "GPUs the licence allows")->capture_default_str();
  issue->add_option("--not-before", io.not_before, "First valid day, YYYY-MM-DD (default: today)");
  issue->add_option("--expires", io.expires, "Last valid day, YYYY-MM-DD")->required();
  issue
      ->add_option("--grace-days", io.grace_days, "Days after expiry that still run, with warnings")
      ->capture_default_str();
  issue->add_option("--issued", io.issued, "Issue date written into the licence (default: today)");
  auto* fp_opt = issue->add_option("--fingerprint", io.fingerprint_file,
                                   "Bind to the machine of this hwfp --out file");
  auto* float_opt = issue->add_flag("--floating", io.floating, "Not bound to hardware");
  fp_opt->excludes(float_opt);
  issue->add_option("--max-changed", max_changed, "Components allowed to change (default: (n-1)/3)")
      ->check(CLI::NonNegativeNumber);
  issue->add_option("--id", io.id, "Licence id, 16 hex digits (default: random)");
  issue->add_option("--out", out, "Licence file to write")->required();

  // sign-activation
  auto* sign_act = app.add_subcommand("sign-activation",
                                      "Vendor: answer an activation request with a bound licence");
  std::string request_file, entitlement_file, today_arg;
  sign_act->add_option("request", request_file, "Request file from activate-request")->required();
  sign_act->add_option("--key", key_file, "Vendor private key")->required();
  sign_act
      ->add_option("--license", entitlement_file,
                   "The customer's entitlement licence (usually floating)")
      ->required();
  sign_act
      ->add_option("--max-changed", max_changed, "Components allowed to change (default: (n-1)/3)")
      ->check(CLI::NonNegativeNumber);
  sign_act->add_option("--today", today_arg, "Issue date (default: today)");
  QuoteCheck quote_check;
  auto* policy_opt = sign_act->add_option(
      "--attest-policy", quote_check.policy_file,
      "Require a TPM quote proving this policy's state (from attest-enroll)");
  auto* vendor_challenge_opt = sign_act->add_option(
      "--challenge", quote_check.challenge_file,
      "Your copy of the challenge the quote must answer (attest-challenge; consumed on success)");
  policy_opt->needs(vendor_challenge_opt);
  vendor_challenge_opt->needs(policy_opt);
  sign_act
      ->add_flag("--require-ek-certified", quote_check.require_ek_certified,
                 "Refuse a policy whose attestation key is trusted on first use (attest-enroll); "
                 "accept only one the vendor certified through the TPM's EK (attest-ek-certify)")
      ->needs(policy_opt);
  sign_act->add_option("--out", out, "Activation file to write")->required();

  // status
  auto* status =
      app.add_subcommand("status", "Customer: is this licence valid on this machine now?");
  std::string license_file, pub_file, state_file, now_arg, root = "/";
  std::int64_t tolerance = 3600;
  status->add_option("license", license_file, "Licence file")->required();
  status->add_option("--public-key", pub_file, "Trusted vendor public key (PEM) or keyring (keyring-init)")->required();
  std::string revocations_file;
  status->add_option("--revocations", revocations_file, "Signed revocation list from the vendor (revoke)");
  status->add_option("--state", state_file, "Last-seen state file (default: LICENSE.state)");
  status->add_option("--now", now_arg,
                     "Pretend the clock reads this: YYYY-MM-DD (noon UTC) or @UNIXSECONDS");
  status->add_option("--root", root, "Fingerprint the tree under this directory")
      ->capture_default_str();
  status
      ->add_option("--rollback-tolerance", tolerance,
                   "Seconds the clock may step back (NTP) before it counts")
      ->capture_default_str()
      ->check(CLI::Range(std::int64_t{0}, std::int64_t{30} * kSecondsPerDay));
  bool anti_tamper = false;
  status->add_flag("--anti-tamper", anti_tamper,
                   "First check this program's own code against its build seal, and for a debugger or "
                   "hooked libraries (state TAMPERED, exit 17)");
  std::string metrics_out;
  gpulab::add_metrics_out_flag(*status, metrics_out,
                               "the licence state, its expiry and the time left (also when unreadable)");

  // activate-request
  auto* act_req = app.add_subcommand("activate-request",
                                     "Customer: write an activation request (fingerprint + nonce)");
  act_req->add_option("--license", entitlement_file, "The entitlement licence to activate")
      ->required();
  act_req->add_option("--root", root, "Fingerprint the tree under this directory")
      ->capture_default_str();
  act_req->add_option("--today", today_arg, "Request date (default: today)");
  QuoteSource quote_source{"", default_tcti()};
  act_req->add_option("--challenge", quote_source.challenge_file,
                      "Answer the vendor's attestation challenge with a TPM quote");
  act_req
      ->add_option("--tcti", quote_source.tcti,
                   "TPM to quote (tpm2-tools TCTI; default $TPM2TOOLS_TCTI or the kernel's)")
      ->capture_default_str();
  act_req->add_option("--out", out, "Request file to write (keep it: activate needs it)")
      ->required();

  // activate
  auto* activate =
      app.add_subcommand("activate", "Customer: verify and install the vendor's activation file");
  std::string activation_file;
  activate->add_option("activation", activation_file, "Activation file from sign-activation")
      ->required();
  activate
      ->add_option("--request", request_file,
                   "The pending request it answers (consumed on success)")
      ->required();
  activate->add_option("--public-key", pub_file, "Trusted vendor public key")->required();
  activate->add_option("--root", root, "Fingerprint the tree under this directory")
      ->capture_default_str();
  activate->add_option("--out", out, "Where to install the licence")->required();

  auto* demo =
      app.add_subcommand("demo", "Every licence state on simulated dates, in a scratch directory");

  const TrustCommands trust(app);
  const AttestCommands attest(app);
  const EkCommands ek_enrolment(app);

  return gpulab::run_program("licensectl", app, argc, argv, [&]() -> int {
    // The result as text or as one JSON document.
    const auto emit = [&](const gpulab::Json& doc, const std::string& text,
                          int code = gpulab::kExitOk) {
      if (common.json)
        gpulab::print_json(doc);
      else
        fmt::print("{}", text);
      return code;
    };
    const Date today = today_arg.empty() ? date_of(system_now()) : date_arg(today_arg, "--today");
    if (const auto code = trust.run(today)) return *code;
    if (const auto code = attest.run(today, common.json)) return *code;
    if (const auto code = ek_enrolment.run(today, common.json)) return *code;
    if (*keygen) {
      const auto r = run_keygen(key_prefix, force);
      return emit(to_json(r), render(r));
    }
    if (*issue) {
      const auto r = run_issue(io, today);
      return emit(to_json(r), render(r));
    }
    if (*sign_act) {
      const auto r =
          run_sign_activation(request_file, entitlement_file, key_file, today, max_changed, out,
                              quote_check);
      return emit(sign_activation_json(r), render_sign_activation(r));
    }
    if (*act_req) {
      const auto r = run_activate_request(entitlement_file, root, today, out, quote_source);
      return emit(activate_request_json(r), render_activate_request(r));
    }
    if (*activate) {
      const auto r = run_activate(activation_file, request_file, pub_file, root, out);
      return emit(to_json(r), render(r));
    }
    if (*status) {
      GateOptions o;
      o.license_file = license_file;
      o.public_key_file = pub_file;
      o.revocations_file = revocations_file;
      o.state_file = state_file;
      o.clock = clock_arg(now_arg);
      o.fingerprint = [&](std::string_view p) { return host_fingerprint(root, p); };
      o.rollback_tolerance_s = tolerance;
      o.anti_tamper = anti_tamper;
      LicenseCheck check;
      try {
        check = check_license(o);
      } catch (const gpulab::UsageError&) {
        // A licence that cannot be read is a state the alerts must see, not a stale file.
        if (!metrics_out.empty())
          gpulab::write_metrics_out(metrics_out, unreadable_license_metrics(license_file, o.clock()));
        throw;
      }
      if (!metrics_out.empty()) gpulab::write_metrics_out(metrics_out, license_metrics(license_file, check));
      const StatusReport r{license_file, std::move(check)};
      return emit(to_json(r), render(r), r.exit_code());
    }
    if (*demo) {
      const auto r = run_demo_report();
      return emit(to_json(r), render(r),
                  r.failed() == 0 ? gpulab::kExitOk : gpulab::kExitCheckFailed);
    }
    return gpulab::kExitUsage;
  });
}
