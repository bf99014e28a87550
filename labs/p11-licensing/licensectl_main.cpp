// licensectl: Ed25519-signed, hardware-bound licences that work without a
// licence server — vendor commands (keygen, issue, sign-activation) and
// customer commands (status, activate-request, activate), plus a demo.
#include <fmt/core.h>
#include <stdlib.h>

#include <algorithm>
#include <sstream>

#include "gpulab/cli.hpp"
#include "gpulab/json.hpp"
#include "gpulab/table.hpp"
#include "licensing/activation.hpp"
#include "licensing/demo.hpp"
#include "licensing/host_probe.hpp"
#include "licensing/license_gate.hpp"
#include "licensing/record.hpp"
#include "licensing/rollback_guard.hpp"
#include "licensing/secure_file.hpp"

using namespace licensing;
namespace fs = std::filesystem;

namespace {

Date date_arg(const std::string& s, std::string_view flag) {
  auto d = parse_date(s);
  if (!d) throw gpulab::UsageError(std::string(flag) + " must be a YYYY-MM-DD date, got '" + s + "'");
  return *d;
}

// --now: a date (taken at 12:00 UTC) or "@<unix seconds>"; empty = the system clock.
Clock clock_arg(const std::string& s) {
  if (s.empty()) return system_now;
  if (s.front() == '@') {
    auto v = parse_uint(s.substr(1), 1ull << 40);
    if (!v) throw gpulab::UsageError("--now @SECONDS needs a canonical non-negative integer");
    return [t = static_cast<std::int64_t>(*v)] { return t; };
  }
  const std::int64_t t = start_of(date_arg(s, "--now")) + kSecondsPerDay / 2;
  return [t] { return t; };
}

std::vector<std::string> features_arg(const std::string& csv) {
  std::vector<std::string> out;
  std::stringstream ss(csv);
  for (std::string f; std::getline(ss, f, ',');) out.push_back(f);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

Fingerprint host_fingerprint(const std::string& root, std::string_view product) {
  return fingerprint_of(product, probe_host(ProbeOptions{root, {}}));
}

std::string json_date(Date d) { return format_date(d); }

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "licensectl: offline licences - Ed25519-signed, hardware-bound with fuzzy matching, grace periods,\n"
      "clock-rollback detection and air-gapped activation by file round trip. No network code path."};
  app.require_subcommand(1);
  gpulab::CommonOptions common;
  gpulab::add_json_flag(app, common);

  // keygen
  auto* keygen = app.add_subcommand("keygen", "Vendor: create an Ed25519 signing key pair (PREFIX.key 0600, PREFIX.pub)");
  std::string key_prefix = "vendor";
  bool force = false;
  keygen->add_option("--out", key_prefix, "Path prefix of the two key files")->capture_default_str();
  keygen->add_flag("--force", force, "Replace existing key files");

  // issue
  auto* issue = app.add_subcommand("issue", "Vendor: sign a licence");
  std::string key_file, customer, product = "gpulab-serve", features, not_before, expires, issued, fp_file, out, id;
  std::uint32_t max_gpus = 1, grace_days = 14;
  int max_changed = -1;
  bool floating = false;
  issue->add_option("--key", key_file, "Vendor private key (from keygen)")->required();
  issue->add_option("--customer", customer, "Customer name (UTF-8)")->required();
  issue->add_option("--product", product, "Product name")->capture_default_str();
  issue->add_option("--features", features, "Comma-separated features, e.g. batching,kv-offload")->required();
  issue->add_option("--max-gpus", max_gpus, "GPUs the licence allows")->capture_default_str();
  issue->add_option("--not-before", not_before, "First valid day, YYYY-MM-DD (default: today)");
  issue->add_option("--expires", expires, "Last valid day, YYYY-MM-DD")->required();
  issue->add_option("--grace-days", grace_days, "Days after expiry that still run, with warnings")->capture_default_str();
  issue->add_option("--issued", issued, "Issue date written into the licence (default: today)");
  auto* fp_opt = issue->add_option("--fingerprint", fp_file, "Bind to the machine of this hwfp --out file");
  auto* float_opt = issue->add_flag("--floating", floating, "Not bound to hardware");
  fp_opt->excludes(float_opt);
  issue->add_option("--max-changed", max_changed, "Components allowed to change (default: (n-1)/3)")
      ->check(CLI::NonNegativeNumber);
  issue->add_option("--id", id, "Licence id, 16 hex digits (default: random)");
  issue->add_option("--out", out, "Licence file to write")->required();

  // sign-activation
  auto* sign_act = app.add_subcommand("sign-activation", "Vendor: answer an activation request with a bound licence");
  std::string request_file, entitlement_file, today_arg;
  sign_act->add_option("request", request_file, "Request file from activate-request")->required();
  sign_act->add_option("--key", key_file, "Vendor private key")->required();
  sign_act->add_option("--license", entitlement_file, "The customer's entitlement licence (usually floating)")->required();
  sign_act->add_option("--max-changed", max_changed, "Components allowed to change (default: (n-1)/3)")
      ->check(CLI::NonNegativeNumber);
  sign_act->add_option("--today", today_arg, "Issue date (default: today)");
  sign_act->add_option("--out", out, "Activation file to write")->required();

  // status
  auto* status = app.add_subcommand("status", "Customer: is this licence valid on this machine now?");
  std::string license_file, pub_file, state_file, now_arg, root = "/";
  std::int64_t tolerance = 3600;
  status->add_option("license", license_file, "Licence file")->required();
  status->add_option("--public-key", pub_file, "Trusted vendor public key")->required();
  status->add_option("--state", state_file, "Last-seen state file (default: LICENSE.state)");
  status->add_option("--now", now_arg, "Pretend the clock reads this: YYYY-MM-DD (noon UTC) or @UNIXSECONDS");
  status->add_option("--root", root, "Fingerprint the tree under this directory")->capture_default_str();
  status->add_option("--rollback-tolerance", tolerance, "Seconds the clock may step back (NTP) before it counts")
      ->capture_default_str()
      ->check(CLI::Range(std::int64_t{0}, std::int64_t{30} * kSecondsPerDay));

  // activate-request
  auto* act_req = app.add_subcommand("activate-request", "Customer: write an activation request (fingerprint + nonce)");
  act_req->add_option("--license", entitlement_file, "The entitlement licence to activate")->required();
  act_req->add_option("--root", root, "Fingerprint the tree under this directory")->capture_default_str();
  act_req->add_option("--today", today_arg, "Request date (default: today)");
  act_req->add_option("--out", out, "Request file to write (keep it: activate needs it)")->required();

  // activate
  auto* activate = app.add_subcommand("activate", "Customer: verify and install the vendor's activation file");
  std::string activation_file;
  activate->add_option("activation", activation_file, "Activation file from sign-activation")->required();
  activate->add_option("--request", request_file, "The pending request it answers (consumed on success)")->required();
  activate->add_option("--public-key", pub_file, "Trusted vendor public key")->required();
  activate->add_option("--root", root, "Fingerprint the tree under this directory")->capture_default_str();
  activate->add_option("--out", out, "Where to install the licence")->required();

  auto* demo = app.add_subcommand("demo", "Every licence state on simulated dates, in a scratch directory");

  return gpulab::run_program("licensectl", app, argc, argv, [&]() -> int {
    const Date today = today_arg.empty() ? date_of(system_now()) : date_arg(today_arg, "--today");
    auto tolerance_for = [&](std::size_t n) -> std::uint32_t {
      const std::size_t k = max_changed >= 0 ? static_cast<std::size_t>(max_changed) : (n - 1) / 3;
      if (const std::string why = check_tolerance(n, k); !why.empty()) throw gpulab::UsageError(why);
      return static_cast<std::uint32_t>(k);
    };

    if (*keygen) {
      const PrivateKey key = PrivateKey::generate();
      const auto ow = force ? Overwrite::kYes : Overwrite::kNo;
      write_file_atomic(key_prefix + ".key", key.pem(), kSecretMode, ow);
      write_file_atomic(key_prefix + ".pub", key.public_key().pem(), kPublicMode, ow);
      if (common.json) {
        gpulab::print_json({{"private_key", key_prefix + ".key"}, {"public_key", key_prefix + ".pub"},
                            {"key_id", key.public_key().key_id()}});
      } else {
        fmt::print("wrote {}.key (mode 0600, keep offline) and {}.pub; key id {}\n", key_prefix, key_prefix,
                   key.public_key().key_id());
      }
      return gpulab::kExitOk;
    }

    if (*issue) {
      License l;
      l.id = id.empty() ? new_license_id() : id;
      l.product = product;
      l.customer = customer;
      l.features = features_arg(features);
      l.max_gpus = max_gpus;
      l.issued = issued.empty() ? today : date_arg(issued, "--issued");
      l.not_before = not_before.empty() ? l.issued : date_arg(not_before, "--not-before");
      l.expires = date_arg(expires, "--expires");
      l.grace_days = grace_days;
      if (floating) {
        l.floating = true;
      } else if (!fp_file.empty()) {
        const Fingerprint fp = parse_fingerprint(read_file_limited(fp_file, 64 * 1024));
        if (fp.product != product) throw gpulab::UsageError(fp_file + " was taken for product '" + fp.product + "'");
        l.hw = fp.components;
        l.hw_max_changed = tolerance_for(l.hw.size());
      } else {
        throw gpulab::UsageError("give --fingerprint FILE (from hwfp --out) or --floating");
      }
      const PrivateKey key = PrivateKey::load(key_file);
      write_file_atomic(out, sign_license(l, key), kPublicMode);
      if (common.json) {
        gpulab::print_json({{"license", out}, {"id", l.id}, {"key_id", key.public_key().key_id()}});
      } else {
        fmt::print("wrote {}: licence {} for '{}', {} GPUs, {} .. {} (+{} grace days), {}\n", out, l.id, l.customer,
                   l.max_gpus, format_date(l.not_before), format_date(l.expires), l.grace_days,
                   l.floating ? "floating" : fmt::format("bound to {} components (k={})", l.hw.size(), l.hw_max_changed));
      }
      return gpulab::kExitOk;
    }

    if (*sign_act) {
      const ActivationRequest req = parse_request(read_file_limited(request_file, kMaxRecordBytes));
      const SignedLicense ent = parse_license(read_file_limited(entitlement_file, kMaxLicenseBytes));
      const PrivateKey key = PrivateKey::load(key_file);
      write_file_atomic(out, sign_activation(req, ent, key, today, tolerance_for(req.hw.size())), kPublicMode);
      if (common.json) {
        gpulab::print_json({{"activation", out}, {"id", req.license_id}, {"components", req.hw.size()}});
      } else {
        fmt::print("wrote {}: licence {} bound to the {} components of the request (nonce {}...)\n", out,
                   req.license_id, req.hw.size(), req.nonce.substr(0, 8));
      }
      return gpulab::kExitOk;
    }

    if (*act_req) {
      const SignedLicense ent = parse_license(read_file_limited(entitlement_file, kMaxLicenseBytes));
      const ActivationRequest req = make_request(ent, host_fingerprint(root, ent.license.product), today);
      write_file_atomic(out, format_request(req), kSecretMode);
      if (common.json) {
        gpulab::print_json({{"request", out}, {"id", req.license_id}, {"components", req.hw.size()}});
      } else {
        fmt::print("wrote {}: activation request for licence {} ({} components); carry it to the vendor\n", out,
                   req.license_id, req.hw.size());
      }
      return gpulab::kExitOk;
    }

    if (*activate) {
      const ActivationRequest pending = parse_request(read_file_limited(request_file, kMaxRecordBytes));
      const PublicKey vendor = PublicKey::load(pub_file);
      const std::string text = read_file_limited(activation_file, kMaxLicenseBytes);
      const SignedLicense lic = accept_activation(text, pending, vendor, host_fingerprint(root, pending.product));
      write_file_atomic(out, text, kPublicMode);
      fs::remove(request_file);  // one request, one activation: replaying this answer later fails
      if (common.json) {
        gpulab::print_json({{"installed", out}, {"id", lic.license.id}, {"components", lic.license.hw.size()},
                            {"max_changed", lic.license.hw_max_changed}});
      } else {
        fmt::print("installed {}: licence {} activated for this machine ({} components, k={})\n", out,
                   lic.license.id, lic.license.hw.size(), lic.license.hw_max_changed);
      }
      return gpulab::kExitOk;
    }

    if (*status) {
      GateOptions o;
      o.license_file = license_file;
      o.public_key_file = pub_file;
      o.state_file = state_file;
      o.clock = clock_arg(now_arg);
      o.fingerprint = [&](std::string_view p) { return host_fingerprint(root, p); };
      o.rollback_tolerance_s = tolerance;
      const LicenseCheck c = check_license(o);
      const License& l = c.license.license;
      const Evaluation& e = c.evaluation;
      if (common.json) {
        gpulab::Json j;
        j["license"] = license_file;
        j["id"] = l.id;
        j["product"] = l.product;
        j["customer"] = l.customer;
        j["features"] = l.features;
        j["max_gpus"] = l.max_gpus;
        j["issued"] = json_date(l.issued);
        j["not_before"] = json_date(l.not_before);
        j["expires"] = json_date(l.expires);
        j["grace_days"] = l.grace_days;
        j["binding"] = l.floating ? "floating" : "hardware";
        if (e.hw) {
          j["hw"] = {{"licensed", e.hw->licensed}, {"changed", e.hw->changed()}, {"max_changed", e.hw->max_changed}};
        }
        j["key_id"] = l.key_id;
        j["now"] = c.now;
        j["state"] = state_name(e.state);
        j["days_left"] = e.days_left;
        j["message"] = e.message;
        j["exit_code"] = state_exit_code(e.state);
        gpulab::print_json(j);
      } else {
        gpulab::Table t;
        t.column("field", gpulab::Table::Align::kLeft).column("value", gpulab::Table::Align::kLeft);
        t.row({"licence", l.id});
        t.row({"customer", l.customer});
        t.row({"product", l.product});
        std::string feats;
        for (const auto& f : l.features) feats += (feats.empty() ? "" : ",") + f;
        t.row({"features", feats});
        t.row({"max GPUs", std::to_string(l.max_gpus)});
        t.row({"valid", fmt::format("{} .. {} (+{} grace days)", format_date(l.not_before), format_date(l.expires),
                                    l.grace_days)});
        t.row({"binding", l.floating ? std::string("floating (any machine)")
                                     : e.hw ? e.hw->explain()
                                            : fmt::format("hardware, {} components", l.hw.size())});
        t.row({"signed by", "key " + l.key_id});
        fmt::print("{}", t.render());
        fmt::print("{}: {}\n", state_name(e.state), e.message);
      }
      return state_exit_code(e.state);
    }

    if (*demo) {
      char tmpl[] = "/tmp/licensectl-demo-XXXXXX";
      if (!mkdtemp(tmpl)) throw gpulab::RunError("cannot create a scratch directory in /tmp");
      const fs::path dir = tmpl;
      std::vector<DemoRow> rows;
      try {
        rows = run_demo(dir);
      } catch (...) {
        fs::remove_all(dir);
        throw;
      }
      fs::remove_all(dir);
      const auto failed = static_cast<std::size_t>(std::count_if(rows.begin(), rows.end(), [](const DemoRow& r) { return !r.pass(); }));
      if (common.json) {
        gpulab::Json j = gpulab::Json::array();
        for (const auto& r : rows) {
          j.push_back({{"scenario", r.scenario}, {"date", r.date}, {"expected", r.expected}, {"got", r.got},
                       {"exit_code", r.exit_code}, {"pass", r.pass()}, {"detail", r.detail}});
        }
        gpulab::print_json({{"scenarios", j}, {"failed", failed}});
      } else {
        fmt::print("licensectl demo: one hardware-bound licence and its tampered copies, checked through the real\n"
                   "files and code paths on simulated dates (demo keys come from fixed seeds)\n\n");
        gpulab::Table t;
        t.column("scenario", gpulab::Table::Align::kLeft)
            .column("date", gpulab::Table::Align::kLeft)
            .column("expected", gpulab::Table::Align::kLeft)
            .column("got", gpulab::Table::Align::kLeft)
            .column("exit")
            .column("check", gpulab::Table::Align::kLeft)
            .column("what the user sees", gpulab::Table::Align::kLeft);
        for (const auto& r : rows) {
          t.row({r.scenario, r.date, r.expected, r.got, std::to_string(r.exit_code), r.pass() ? "PASS" : "FAIL", r.detail});
        }
        fmt::print("{}\n", t.render());
        fmt::print("{} of {} scenarios behaved as expected\n", rows.size() - failed, rows.size());
      }
      return failed == 0 ? gpulab::kExitOk : gpulab::kExitCheckFailed;
    }
    return gpulab::kExitUsage;
  });
}
