// `ring-allreduce --metrics-out FILE`: the byte-count run's per-rank collective
// metrics in the Prometheus text format, under the platform's names (what
// gpu-exporter --textfile-dir re-exposes and the SLO pack in
// labs/p10-exporter/slo alerts on).
#pragma once

#include <filesystem>
#include <vector>

#include "gpulab/prom_text.hpp"
#include "ring_allreduce/launcher.hpp"
#include "ring_allreduce/straggler.hpp"

namespace ring {

// One series per rank that reported, label rank="N":
//   allreduce_operations_total  ring all-reduces the rank started (1 per run)
//   allreduce_timeouts_total    those its watchdog ended ("watchdog: no progress ...")
//   allreduce_seconds_total     a finished rank: the ring all-reduce's own time;
//                               a failed one: launch until it gave up
//   allreduce_bytes_total       payload bytes the rank wrote in the ring all-reduce
//                               (finished ranks only: a failed rank's report is lost)
// A rank that died (--kill-rank) reports nothing, as a dead process would not.
gpulab::prom::Exposition headline_metrics(const std::vector<RankOutcome>& ranks);

// The straggler check (--steps / --slow-rank), one gauge series per rank:
//   allreduce_step_compute_seconds  median time on its own work before each all-reduce
//   allreduce_step_wait_seconds     median time inside each all-reduce (waiting for the slowest)
//   allreduce_straggler_score       robust score, (compute - median) / max(1.4826 MAD, 0.1 median)
//   allreduce_straggler             1 for the rank the detector names, else 0
gpulab::prom::Exposition straggler_metrics(const Detection& d,
                                           const std::vector<double>& wait_seconds);

// True when the rank failed because its watchdog fired.
bool timed_out(const RankOutcome& rank);

}  // namespace ring
