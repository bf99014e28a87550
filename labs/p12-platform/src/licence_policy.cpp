#include "platform/licence_policy.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "gpulab/errors.hpp"
#include "licensing/license_gate.hpp"

namespace platform {

std::optional<std::string> feature_for(JobKind kind) {
  switch (kind) {
    case JobKind::kMatmul: return std::nullopt;
    case JobKind::kTrain: return "training";
    case JobKind::kServe: return "serving";
  }
  return std::nullopt;
}

LicencePolicy::LicencePolicy(LicenceOptions options) : options_(std::move(options)) {
  if (!options_.clock) options_.clock = licensing::system_now;
  status_ = evaluate(true);
}

void LicencePolicy::refresh() { status_ = evaluate(false); }

LicenceStatus LicencePolicy::evaluate(bool at_start) const {
  LicenceStatus st;
  if (options_.license_file.empty()) return st;  // the community edition
  licensing::GateOptions g;
  g.license_file = options_.license_file;
  g.public_key_file = options_.public_key_file;
  g.state_file = options_.state_file;
  g.clock = options_.clock;
  licensing::LicenseCheck check;
  try {
    check = licensing::check_license(g);
  } catch (const std::exception& e) {
    if (at_start) throw gpulab::UsageError(fmt::format("--license: {}", e.what()));
    st.state = "UNREADABLE";
    st.message = e.what();
    st.max_devices = 0;
    st.admits_new_jobs = false;
    st.features.clear();
    return st;
  }
  const auto& lic = check.license.license;
  const auto& ev = check.evaluation;
  st.state = std::string(licensing::state_name(ev.state));
  st.message = ev.message;
  st.customer = lic.customer;
  st.days_left = ev.days_left;
  st.features = lic.features;
  switch (ev.state) {
    case licensing::LicenseState::kValid:
    case licensing::LicenseState::kGrace:
      st.max_devices = static_cast<int>(std::min<std::uint32_t>(lic.max_gpus, 1'000'000));
      st.admits_new_jobs = true;
      break;
    case licensing::LicenseState::kExpired:
      // Running jobs finish; nothing new is admitted. The cap stays so that
      // already-running work is not counted as over the limit.
      st.max_devices = static_cast<int>(std::min<std::uint32_t>(lic.max_gpus, 1'000'000));
      st.admits_new_jobs = false;
      break;
    default:
      if (at_start) throw gpulab::UsageError(fmt::format("licence {}: {}", st.state, ev.message));
      st.max_devices = 0;
      st.admits_new_jobs = false;
      break;
  }
  return st;
}

std::string LicencePolicy::admission_refusal(JobKind kind) const {
  if (!status_.admits_new_jobs) {
    return fmt::format("licence {}: {} — no new jobs are admitted", status_.state, status_.message);
  }
  const auto feature = feature_for(kind);
  if (feature && std::find(status_.features.begin(), status_.features.end(), *feature) == status_.features.end()) {
    return fmt::format("the licence does not include the '{}' feature that {} jobs need", *feature, kind_name(kind));
  }
  return {};
}

std::string device_cap_refusal(int cap, int in_use, int want) {
  if (cap < 0 || in_use + want <= cap) return {};
  return fmt::format("licence allows {} devices in use; {} in use, job needs {}", cap, in_use,
                     want);
}

}  // namespace platform
