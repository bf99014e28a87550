// `licensectl status --metrics-out FILE`: a licence's state as Prometheus
// text for gpu-exporter's --textfile-dir (or node-exporter's textfile
// collector), so the SLO pack can alert before a licence runs out
// (labs/p10-exporter/slo/rules/licence.rules.yml).
//
// Durations are in seconds, the base unit promtool's lint asks for. The file
// is written by a timer, not at scrape time, so the countdowns go stale
// between runs; the alerts therefore compare the *timestamps* of expiry
// and of the end of grace with Prometheus' time(), which stay true however
// old the file is, and gpulab_license_check_timestamp_seconds says how old it is.
#pragma once

#include <string>

#include "gpulab/prom_text.hpp"
#include "licensing/license_gate.hpp"

namespace licensing {

// Every state, VALID .. REVOKED, plus UNREADABLE: one gpulab_license_state
// series each, 1 for the current one and 0 for the others, so a state change
// never leaves a stale 1 behind.
gpulab::prom::Exposition license_metrics(const std::string& license_file,
                                         const LicenseCheck& check);
// For a licence or key file that could not be read or parsed (state UNREADABLE).
gpulab::prom::Exposition unreadable_license_metrics(const std::string& license_file,
                                                    std::int64_t now);

}  // namespace licensing
