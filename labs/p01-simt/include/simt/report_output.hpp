// How the built-in report reads: the curriculum's table first (byte for byte),
// then the checks and the extensions. Text and JSON render the same results.
#pragma once

#include <string>

#include "gpulab/json.hpp"
#include "simt/divergence_report.hpp"
#include "simt/latency_hiding.hpp"

namespace simt {

// The curriculum's four-row table: kernel, issues, util%, slowdown.
std::string render_divergence_table(const DivergenceReport& report);
// Table, checks, extensions 1-3, and the latency-hiding table.
std::string render_report(const DivergenceReport& report, const LatencyExperiment& latency);
gpulab::Json report_json(const DivergenceReport& report, const LatencyExperiment& latency);

// "uniform  32/32 ..." detail of what went wrong in a failed kernel, one line.
std::string describe_failure(const KernelResult& k);

}  // namespace simt
