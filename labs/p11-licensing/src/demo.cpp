#include "licensing/demo.hpp"

#include <cstdint>

#include "gpulab/errors.hpp"
#include "licensing/activation.hpp"
#include "licensing/digest.hpp"
#include "licensing/host_probe.hpp"
#include "licensing/license_gate.hpp"
#include "licensing/record.hpp"
#include "licensing/secure_file.hpp"

namespace licensing {

namespace fs = std::filesystem;

namespace {

constexpr std::string_view kProduct = "gpulab-serve";

// Two synthetic servers; B shares only the CPU model and flags with A.
std::vector<Reading> host_a() {
  return {{"machine_id", "", {"4c4c4544004a3510804bb4c04f4e3332"}, ""},
          {"cpu_model", "", {"AMD EPYC 9654 96-Core Processor"}, ""},
          {"cpu_flags", "", {"aes avx2 avx512f sha_ni sse4_2"}, ""},
          {"nic_mac", "", {"0c:42:a1:5e:10:00", "0c:42:a1:5e:10:01"}, ""},
          {"root_disk", "", {"S6CKNE0R912345"}, ""},
          {"gpu_uuid", "", {"gpu-2f1c5a90-3b7e-4d21-9c55-0a1b2c3d4e5f"}, ""}};
}

std::vector<Reading> host_a_nic_swapped() {
  auto r = host_a();
  r[3].raw[1] = "b8:ce:f6:77:20:4a";  // one NIC replaced
  return r;
}

std::vector<Reading> host_b() {
  return {{"machine_id", "", {"9a0e6e7c0f3d4c8e8a71d3f2b6c5e401"}, ""},
          {"cpu_model", "", {"AMD EPYC 9654 96-Core Processor"}, ""},
          {"cpu_flags", "", {"aes avx2 avx512f sha_ni sse4_2"}, ""},
          {"nic_mac", "", {"0c:42:a1:77:31:10", "0c:42:a1:77:31:11"}, ""},
          {"root_disk", "", {"S6CKNE0R998877"}, ""},
          {"gpu_uuid", "", {"gpu-77aa0c1e-5d2f-4e0b-8b1a-fedcba987654"}, ""}};
}

PrivateKey demo_key(std::string_view label) {
  const Digest seed = sha256(label);
  return PrivateKey::from_seed(Bytes(seed.begin(), seed.end()));
}

std::int64_t at_noon(std::string_view date) { return start_of(*parse_date(date)) + kSecondsPerDay / 2; }

std::string replace_line(std::string text, std::string_view from, std::string_view to) {
  const auto p = text.find(from);
  if (p != std::string::npos) text.replace(p, from.size(), to);
  return text;
}

class Demo {
 public:
  explicit Demo(const fs::path& dir) : dir_(dir) {
    const PrivateKey vendor = demo_key("gpulab p11 demo vendor key");
    write_file_atomic(dir_ / "vendor.pub", vendor.public_key().pem(), kPublicMode);
    License l;
    l.id = "5eed00c0ffee0001";
    l.product = std::string(kProduct);
    l.customer = "Example Sovereign Cloud";
    l.features = {"batching", "kv-offload"};
    l.max_gpus = 8;
    l.issued = *parse_date("2025-12-15");
    l.not_before = *parse_date("2026-01-01");
    l.expires = *parse_date("2026-12-31");
    l.grace_days = 14;
    l.hw = fingerprint_of(kProduct, host_a()).components;
    l.hw_max_changed = 2;
    license_text_ = sign_license(l, vendor);
    write_file_atomic(dir_ / "license.lic", license_text_, kPublicMode);

    License floating = l;
    floating.id = "5eed00c0ffee0002";
    floating.floating = true;
    floating.hw.clear();
    floating.hw_max_changed = 0;
    entitlement_text_ = sign_license(floating, vendor);
    write_file_atomic(dir_ / "entitlement.lic", entitlement_text_, kPublicMode);
  }

  // One `licensectl status` run: state name and message, or REJECTED and the parse error.
  void status(std::string scenario, std::string_view date, std::string expected, const std::string& file,
              const std::vector<Reading>& host, std::string_view license_text = {}) {
    if (!license_text.empty()) write_file_atomic(dir_ / file, license_text, kPublicMode);
    GateOptions o;
    o.license_file = dir_ / file;
    o.public_key_file = dir_ / "vendor.pub";
    o.state_file = dir_ / "license.state";
    o.clock = [t = at_noon(date)] { return t; };
    o.fingerprint = [host](std::string_view product) { return fingerprint_of(product, host); };
    DemoRow row{std::move(scenario), std::string(date), std::move(expected), "", 0, ""};
    try {
      const LicenseCheck c = check_license(o);
      row.got = std::string(state_name(c.evaluation.state));
      row.exit_code = state_exit_code(c.evaluation.state);
      row.detail = c.evaluation.message;
    } catch (const gpulab::UsageError& e) {
      row.got = "REJECTED";
      row.exit_code = gpulab::kExitUsage;
      row.detail = e.what();
    }
    // The scratch directory's name changes every run; the table should not.
    const std::string prefix = dir_.string() + "/";
    for (auto p = row.detail.find(prefix); p != std::string::npos; p = row.detail.find(prefix)) {
      row.detail.erase(p, prefix.size());
    }
    rows_.push_back(std::move(row));
  }

  void activation_round_trip() {
    const PrivateKey vendor = demo_key("gpulab p11 demo vendor key");
    const PublicKey vendor_pub = vendor.public_key();
    const SignedLicense ent = parse_license(entitlement_text_);
    const Fingerprint here = fingerprint_of(kProduct, host_a());
    const Date today = *parse_date("2026-03-01");
    // Customer: request file; vendor: activation file; customer: install.
    const std::string request = format_request(make_request(ent, here, today));
    write_file_atomic(dir_ / "activation.req", request, kPublicMode);
    const ActivationRequest pending = parse_request(read_file_limited(dir_ / "activation.req", kMaxRecordBytes));
    const std::string activation = sign_activation(pending, ent, vendor, today, 2);
    write_file_atomic(dir_ / "activation.lic", activation, kPublicMode);
    DemoRow row{"air-gap activation round trip", "2026-03-01", "VALID", "", 0, ""};
    try {
      const SignedLicense installed = accept_activation(activation, pending, vendor_pub, here);
      write_file_atomic(dir_ / "activated.lic", activation, kPublicMode);
      const Evaluation e = evaluate(installed, vendor_pub, here, at_noon("2026-03-01"), std::nullopt);
      row.got = std::string(state_name(e.state));
      row.exit_code = state_exit_code(e.state);
      row.detail = "request -> vendor -> activation installed; " + e.message;
    } catch (const gpulab::UsageError& e) {
      row.got = "REJECTED";
      row.exit_code = gpulab::kExitUsage;
      row.detail = e.what();
    }
    rows_.push_back(std::move(row));

    // The same activation file offered to a fresh request (a cloned or re-imaged machine).
    const ActivationRequest second = make_request(ent, here, today);
    DemoRow replay{"old activation replayed", "2026-03-01", "REJECTED", "", 0, ""};
    try {
      accept_activation(activation, second, vendor_pub, here);
      replay.got = "ACCEPTED";
    } catch (const gpulab::UsageError& e) {
      replay.got = "REJECTED";
      replay.exit_code = gpulab::kExitUsage;
      replay.detail = e.what();
    }
    rows_.push_back(std::move(replay));
  }

  std::vector<DemoRow> run() {
    const auto a = host_a();
    status("before not_before", "2025-12-20", "NOT_YET_VALID", "license.lic", a);
    status("first valid day", "2026-01-01", "VALID", "license.lic", a);
    status("one NIC replaced", "2026-06-15", "VALID", "license.lic", host_a_nic_swapped());
    status("copied to another server", "2026-06-15", "HW_MISMATCH", "license.lic", host_b());
    status("expiry day", "2026-12-31", "VALID", "license.lic", a);
    status("first grace day", "2027-01-01", "GRACE", "license.lic", a);
    status("last grace day", "2027-01-14", "GRACE", "license.lic", a);
    status("after grace", "2027-01-15", "EXPIRED", "license.lic", a);
    status("clock set back", "2026-07-01", "CLOCK_ROLLBACK", "license.lic", a);
    // The attacker's edit: move last_seen back to before the date they want to fake.
    const std::string state = read_file_limited(dir_ / "license.state", 4096);
    const std::string seen = "last_seen: " + std::to_string(at_noon("2027-01-15"));
    write_file_atomic(dir_ / "license.state",
                      replace_line(state, seen, "last_seen: " + std::to_string(at_noon("2026-06-30"))), kSecretMode);
    status("last-seen file edited", "2026-07-01", "CLOCK_ROLLBACK", "license.lic", a);
    fs::remove(dir_ / "license.state");  // the remaining cases start from a clean state

    status("max_gpus edited 8 -> 64", "2026-06-15", "BAD_SIGNATURE", "edited.lic", a,
           replace_line(license_text_, "max_gpus: 8\n", "max_gpus: 64\n"));
    License copy = parse_license(license_text_).license;
    status("re-signed with another key", "2026-06-15", "BAD_SIGNATURE", "resigned.lic", a,
           sign_license(copy, demo_key("someone else's key")));
    status("truncated download", "2026-06-15", "REJECTED", "truncated.lic", a,
           license_text_.substr(0, license_text_.size() / 2));
    status("fields swapped", "2026-06-15", "REJECTED", "swapped.lic", a,
           replace_line(license_text_, "not_before: 2026-01-01\nexpires: 2026-12-31\n",
                        "expires: 2026-12-31\nnot_before: 2026-01-01\n"));
    status("re-encoded (max_gpus: 08)", "2026-06-15", "REJECTED", "reencoded.lic", a,
           replace_line(license_text_, "max_gpus: 8\n", "max_gpus: 08\n"));
    activation_round_trip();
    return std::move(rows_);
  }

 private:
  fs::path dir_;
  std::string license_text_;
  std::string entitlement_text_;
  std::vector<DemoRow> rows_;
};

}  // namespace

std::vector<DemoRow> run_demo(const fs::path& workdir) { return Demo(workdir).run(); }

}  // namespace licensing
