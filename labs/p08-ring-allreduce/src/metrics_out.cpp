#include "ring_allreduce/metrics_out.hpp"

#include <fmt/format.h>

#include <stdexcept>
#include <string>

#include "gpulab/errors.hpp"
#include "gpulab/metrics_out.hpp"

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

void write_metrics_file(const std::filesystem::path& path, const std::vector<RankOutcome>& ranks) {
  gpulab::write_metrics_out(path, headline_metrics(ranks));
}

}  // namespace ring
