#include "ring_allreduce/metrics_out.hpp"

#include <fmt/format.h>

#include <stdexcept>
#include <string>

namespace ring {

bool timed_out(const RankOutcome& rank) {
  return rank.status == RankOutcome::Status::kFailed && rank.error.starts_with("watchdog:");
}

gpulab::prom::Exposition headline_metrics(const std::vector<RankOutcome>& ranks) {
  gpulab::prom::Exposition e;
  auto& ops = e.counter("allreduce_operations_total", "Ring all-reduces this rank started.");
  auto& timeouts =
      e.counter("allreduce_timeouts_total",
                "Ring all-reduces this rank's watchdog ended (no byte moved for --timeout-ms).");
  auto& seconds =
      e.counter("allreduce_seconds_total",
                "Seconds in ring all-reduces (a failed rank: from launch until it gave up).");
  auto& bytes =
      e.counter("allreduce_bytes_total", "Payload bytes this rank wrote in ring all-reduces.");
  for (const RankOutcome& r : ranks) {
    if (r.status == RankOutcome::Status::kDied) continue;  // a dead process writes no metrics
    const gpulab::prom::Labels labels{{"rank", std::to_string(r.rank)}};
    ops.set(labels, 1);
    timeouts.set(labels, timed_out(r) ? 1 : 0);
    if (r.status == RankOutcome::Status::kOk) {
      seconds.set(labels, r.report.at("ring_seconds").get<double>());
      bytes.set(labels, static_cast<double>(r.report.at("ring_bytes").get<std::uint64_t>()));
    } else {
      seconds.set(labels, r.seconds);
    }
  }
  return e;
}

gpulab::prom::Exposition straggler_metrics(const Detection& d,
                                           const std::vector<double>& wait_seconds) {
  gpulab::prom::Exposition e;
  auto& compute =
      e.gauge("allreduce_step_compute_seconds",
              "Median CPU seconds per step on this rank's own work before the all-reduce.");
  auto& wait =
      e.gauge("allreduce_step_wait_seconds",
              "Median seconds per step inside the all-reduce (waiting for the slowest rank).");
  auto& score = e.gauge(
      "allreduce_straggler_score",
      "Robust score of this rank's compute time: (x - median) / max(1.4826 MAD, 0.1 median).");
  auto& flagged =
      e.gauge("allreduce_straggler", "1 when the detector names this rank a straggler.");
  for (const RankScore& r : d.ranks) {
    const gpulab::prom::Labels labels{{"rank", std::to_string(r.rank)}};
    compute.set(labels, r.value);
    wait.set(labels, wait_seconds.at(static_cast<std::size_t>(r.rank)));
    score.set(labels, r.score);
    flagged.set(labels, r.straggler ? 1 : 0);
  }
  return e;
}

}  // namespace ring
