#include "licensing/reports.hpp"

#include <fmt/core.h>
#include <stdlib.h>

#include <algorithm>
#include <filesystem>
#include <sstream>

#include "gpulab/errors.hpp"
#include "gpulab/table.hpp"
#include "licensing/host_probe.hpp"
#include "licensing/record.hpp"
#include "licensing/secure_file.hpp"

namespace licensing {

namespace fs = std::filesystem;

Date date_arg(const std::string& s, std::string_view flag) {
  auto d = parse_date(s);
  if (!d)
    throw gpulab::UsageError(std::string(flag) + " must be a YYYY-MM-DD date, got '" + s + "'");
  return *d;
}

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

std::uint32_t tolerance_for(std::size_t n, int max_changed) {
  const std::size_t k = max_changed >= 0 ? static_cast<std::size_t>(max_changed) : (n - 1) / 3;
  if (const std::string why = check_tolerance(n, k); !why.empty()) throw gpulab::UsageError(why);
  return static_cast<std::uint32_t>(k);
}

// ---- keygen ----

KeygenReport run_keygen(const std::string& prefix, bool force) {
  const PrivateKey key = PrivateKey::generate();
  const auto ow = force ? Overwrite::kYes : Overwrite::kNo;
  write_file_atomic(prefix + ".key", key.pem(), kSecretMode, ow);
  write_file_atomic(prefix + ".pub", key.public_key().pem(), kPublicMode, ow);
  return {prefix, key.public_key().key_id()};
}

std::string render(const KeygenReport& r) {
  return fmt::format("wrote {}.key (mode 0600, keep offline) and {}.pub; key id {}\n", r.prefix,
                     r.prefix, r.key_id);
}

gpulab::Json to_json(const KeygenReport& r) {
  return {
      {"private_key", r.prefix + ".key"}, {"public_key", r.prefix + ".pub"}, {"key_id", r.key_id}};
}

// ---- issue ----

IssueReport run_issue(const IssueOptions& o, Date today) {
  License l;
  l.id = o.id.empty() ? new_license_id() : o.id;
  l.product = o.product;
  l.customer = o.customer;
  l.features = features_arg(o.features);
  l.max_gpus = o.max_gpus;
  l.issued = o.issued.empty() ? today : date_arg(o.issued, "--issued");
  l.not_before = o.not_before.empty() ? l.issued : date_arg(o.not_before, "--not-before");
  l.expires = date_arg(o.expires, "--expires");
  l.grace_days = o.grace_days;
  if (o.floating) {
    l.floating = true;
  } else if (!o.fingerprint_file.empty()) {
    const Fingerprint fp = parse_fingerprint(read_file_limited(o.fingerprint_file, 64 * 1024));
    if (fp.product != o.product)
      throw gpulab::UsageError(o.fingerprint_file + " was taken for product '" + fp.product + "'");
    l.hw = fp.components;
    l.hw_max_changed = tolerance_for(l.hw.size(), o.max_changed);
  } else {
    throw gpulab::UsageError("give --fingerprint FILE (from hwfp --out) or --floating");
  }
  const PrivateKey key = PrivateKey::load(o.key_file);
  write_file_atomic(o.out, sign_license(l, key), kPublicMode);
  return {o.out, l, key.public_key().key_id()};
}

std::string render(const IssueReport& r) {
  const License& l = r.license;
  return fmt::format(
      "wrote {}: licence {} for '{}', {} GPUs, {} .. {} (+{} grace days), {}\n", r.out, l.id,
      l.customer, l.max_gpus, format_date(l.not_before), format_date(l.expires), l.grace_days,
      l.floating ? "floating"
                 : fmt::format("bound to {} components (k={})", l.hw.size(), l.hw_max_changed));
}

gpulab::Json to_json(const IssueReport& r) {
  return {{"license", r.out}, {"id", r.license.id}, {"key_id", r.key_id}};
}

// ---- sign-activation, activate-request ----

RequestReport run_sign_activation(const std::string& request_file,
                                  const std::string& entitlement_file, const std::string& key_file,
                                  Date today, int max_changed, const std::string& out,
                                  const QuoteCheck& attest) {
  const ActivationRequest req = parse_request(read_file_limited(request_file, kMaxRecordBytes));
  const SignedLicense ent = parse_license(read_file_limited(entitlement_file, kMaxLicenseBytes));
  const PrivateKey key = PrivateKey::load(key_file);
  check_quote(req, attest, key.public_key());
  write_file_atomic(
      out, sign_activation(req, ent, key, today, tolerance_for(req.hw.size(), max_changed)),
      kPublicMode);
  consume_challenge(attest);
  return {out, req, !attest.policy_file.empty()};
}

std::string render_sign_activation(const RequestReport& r) {
  return fmt::format(
      "wrote {}: licence {} bound to the {} components of the request (nonce {}...){}\n", r.out,
      r.request.license_id, r.request.hw.size(), r.request.nonce.substr(0, 8),
      r.attested ? "; TPM quote over " + format_pcr_selection(r.request.quote->selection) +
                       " verified"
                 : "");
}

gpulab::Json sign_activation_json(const RequestReport& r) {
  return {{"activation", r.out},
          {"id", r.request.license_id},
          {"components", r.request.hw.size()},
          {"attested", r.attested}};
}

RequestReport run_activate_request(const std::string& entitlement_file, const std::string& root,
                                   Date today, const std::string& out,
                                   const QuoteSource& attest) {
  const SignedLicense ent = parse_license(read_file_limited(entitlement_file, kMaxLicenseBytes));
  ActivationRequest req = make_request(ent, host_fingerprint(root, ent.license.product), today);
  attach_quote(req, attest);
  write_file_atomic(out, format_request(req), kSecretMode);
  return {out, req};
}

std::string render_activate_request(const RequestReport& r) {
  return fmt::format(
      "wrote {}: activation request for licence {} ({} components{}); carry it to the vendor\n",
      r.out, r.request.license_id, r.request.hw.size(),
      r.request.quote ? ", TPM quote over " + format_pcr_selection(r.request.quote->selection) : "");
}

gpulab::Json activate_request_json(const RequestReport& r) {
  return {{"request", r.out}, {"id", r.request.license_id}, {"components", r.request.hw.size()}};
}

// ---- activate ----

ActivateReport run_activate(const std::string& activation_file, const std::string& request_file,
                            const std::string& public_key_file, const std::string& root,
                            const std::string& out) {
  const ActivationRequest pending = parse_request(read_file_limited(request_file, kMaxRecordBytes));
  const PublicKey vendor = PublicKey::load(public_key_file);
  const std::string text = read_file_limited(activation_file, kMaxLicenseBytes);
  SignedLicense lic =
      accept_activation(text, pending, vendor, host_fingerprint(root, pending.product));
  write_file_atomic(out, text, kPublicMode);
  fs::remove(request_file);  // one request, one activation: replaying this answer later fails
  return {out, std::move(lic)};
}

std::string render(const ActivateReport& r) {
  const License& l = r.license.license;
  return fmt::format("installed {}: licence {} activated for this machine ({} components, k={})\n",
                     r.out, l.id, l.hw.size(), l.hw_max_changed);
}

gpulab::Json to_json(const ActivateReport& r) {
  const License& l = r.license.license;
  return {{"installed", r.out},
          {"id", l.id},
          {"components", l.hw.size()},
          {"max_changed", l.hw_max_changed}};
}

// ---- status ----

std::string render(const StatusReport& r) {
  const License& l = r.check.license.license;
  const Evaluation& e = r.check.evaluation;
  gpulab::Table t;
  t.column("field", gpulab::Table::Align::kLeft).column("value", gpulab::Table::Align::kLeft);
  t.row({"licence", l.id});
  t.row({"customer", l.customer});
  t.row({"product", l.product});
  std::string feats;
  for (const auto& f : l.features) feats += (feats.empty() ? "" : ",") + f;
  t.row({"features", feats});
  t.row({"max GPUs", std::to_string(l.max_gpus)});
  t.row({"valid", fmt::format("{} .. {} (+{} grace days)", format_date(l.not_before),
                              format_date(l.expires), l.grace_days)});
  t.row({"binding", l.floating ? std::string("floating (any machine)")
                    : e.hw     ? e.hw->explain()
                               : fmt::format("hardware, {} components", l.hw.size())});
  t.row({"signed by", "key " + l.key_id});
  return t.render() + fmt::format("{}: {}\n", state_name(e.state), e.message);
}

gpulab::Json to_json(const StatusReport& r) {
  const License& l = r.check.license.license;
  const Evaluation& e = r.check.evaluation;
  gpulab::Json j;
  j["license"] = r.license_file;
  j["id"] = l.id;
  j["product"] = l.product;
  j["customer"] = l.customer;
  j["features"] = l.features;
  j["max_gpus"] = l.max_gpus;
  j["issued"] = format_date(l.issued);
  j["not_before"] = format_date(l.not_before);
  j["expires"] = format_date(l.expires);
  j["grace_days"] = l.grace_days;
  j["binding"] = l.floating ? "floating" : "hardware";
  if (e.hw) {
    j["hw"] = {{"licensed", e.hw->licensed},
               {"changed", e.hw->changed()},
               {"max_changed", e.hw->max_changed}};
  }
  j["key_id"] = l.key_id;
  j["now"] = r.check.now;
  j["state"] = state_name(e.state);
  j["days_left"] = e.days_left;
  j["message"] = e.message;
  j["exit_code"] = r.exit_code();
  return j;
}

// ---- demo ----

DemoReport run_demo_report() {
  char tmpl[] = "/tmp/licensectl-demo-XXXXXX";
  if (!mkdtemp(tmpl)) throw gpulab::RunError("cannot create a scratch directory in /tmp");
  const fs::path dir = tmpl;
  DemoReport r;
  try {
    r.rows = run_demo(dir);
  } catch (...) {
    fs::remove_all(dir);
    throw;
  }
  fs::remove_all(dir);
  return r;
}

std::size_t DemoReport::failed() const {
  return static_cast<std::size_t>(
      std::count_if(rows.begin(), rows.end(), [](const DemoRow& r) { return !r.pass(); }));
}

std::string render(const DemoReport& r) {
  gpulab::Table t;
  t.column("scenario", gpulab::Table::Align::kLeft)
      .column("date", gpulab::Table::Align::kLeft)
      .column("expected", gpulab::Table::Align::kLeft)
      .column("got", gpulab::Table::Align::kLeft)
      .column("exit")
      .column("check", gpulab::Table::Align::kLeft)
      .column("what the user sees", gpulab::Table::Align::kLeft);
  for (const auto& row : r.rows) {
    t.row({row.scenario, row.date, row.expected, row.got, std::to_string(row.exit_code),
           row.pass() ? "PASS" : "FAIL", row.detail});
  }
  return "licensectl demo: one hardware-bound licence and its tampered copies, checked through "
         "the real\n"
         "files and code paths on simulated dates (demo keys come from fixed seeds)\n\n" +
         t.render() + "\n" +
         fmt::format("{} of {} scenarios behaved as expected\n", r.rows.size() - r.failed(),
                     r.rows.size());
}

gpulab::Json to_json(const DemoReport& r) {
  gpulab::Json j = gpulab::Json::array();
  for (const auto& row : r.rows) {
    j.push_back({{"scenario", row.scenario},
                 {"date", row.date},
                 {"expected", row.expected},
                 {"got", row.got},
                 {"exit_code", row.exit_code},
                 {"pass", row.pass()},
                 {"detail", row.detail}});
  }
  return {{"scenarios", j}, {"failed", r.failed()}};
}

}  // namespace licensing
