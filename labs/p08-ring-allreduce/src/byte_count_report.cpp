// The curriculum's headline (bytes per rank against the 2(N-1)/N*V bound, or
// the failure report when a rank died) and the world sweep of the same count.
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>

#include "gpulab/errors.hpp"
#include "gpulab/number_format.hpp"
#include "gpulab/table.hpp"
#include "ring_allreduce/commands.hpp"
#include "ring_allreduce/fatal_error.hpp"
#include "ring_allreduce/interface_report.hpp"
#include "ring_allreduce/metrics_out.hpp"

namespace ring {
namespace {

using gpulab::Json;
using gpulab::with_commas;

bool finished(const RankOutcome& r) { return r.status == RankOutcome::Status::kOk; }

// Which survivors noticed the dead rank, and what each one said.
int report_failure(const RunOptions& o, const std::vector<RankOutcome>& ranks, Json& doc) {
  Json jr = Json::array();
  std::vector<int> detected;
  const auto finished_count = std::count_if(ranks.begin(), ranks.end(), finished);
  for (const auto& r : ranks) {
    const bool named = std::find(r.suspects.begin(), r.suspects.end(), o.kill_rank) != r.suspects.end();
    if (r.status == RankOutcome::Status::kFailed && named) detected.push_back(r.rank);
    const char* status = r.status == RankOutcome::Status::kFailed ? "failed" : "died";
    jr.push_back({{"rank", r.rank}, {"status", status}, {"seconds", r.seconds}, {"error", r.error},
                  {"suspects", r.suspects}});
    if (o.common.json) continue;
    if (r.rank == o.kill_rank && r.exit_code == kKilledExitCode)
      fmt::print("  rank {}: exited at the start of step {} (--kill-rank {} --kill-step {})\n", r.rank, o.kill_step,
                 o.kill_rank, o.kill_step);
    else
      fmt::print("  rank {}: {} after {:.2f} s: {}\n", r.rank, finished(r) ? "finished" : status, r.seconds,
                 finished(r) ? "ok" : r.error);
  }
  doc["failure"] = {{"kill_rank", o.kill_rank}, {"kill_step", o.kill_step}, {"timeout_ms", o.timeout_ms},
                    {"ranks", jr}, {"survivors_naming_culprit", detected}, {"survivors_finished", finished_count}};
  if (!o.common.json) {
    if (o.kill_rank >= 0)
      fmt::print("FAIL: rank {} died mid-collective; {} of {} survivors detected it and named it, {} finished first "
                 "(watchdog {} ms)\n",
                 o.kill_rank, detected.size(), o.world - 1, finished_count, o.timeout_ms);
    else
      fmt::print("FAIL: the all-reduce did not complete: {}\n", describe_failures(ranks));
  }
  return gpulab::kExitCheckFailed;
}

}  // namespace

int run_headline(const RunOptions& o, DType dtype, Json& doc, gpulab::prom::Exposition& metrics) {
  const HeadlineSpec spec{o.size, dtype, o.kill_rank, o.kill_step, o.fatal_rank, o.fatal_step};
  const std::string type = dtype == DType::kF64 ? "doubles" : "floats";
  if (o.print()) fmt::print("ring all-reduce: world={}, vector={} {}\n", o.world, o.size, type);
  if (o.print() && o.mpi != nullptr)
    fmt::print("  launched by mpirun: rank and world from MPI, TCP endpoints swapped with MPI_Allgather ({})\n",
               o.mpi->library());
  if (o.kill_rank >= 0 && o.timeout_ms == 0)
    fmt::print(stderr,
               "ring-allreduce: warning: rank {} will exit mid-collective and there is no --timeout-ms: "
               "the survivors will wait forever, like NCCL without NCCL_TIMEOUT (Ctrl-C to stop)\n",
               o.kill_rank);
  std::fflush(stdout);
  const Supervised run = supervise(
      [&](int attempt) {
        HeadlineSpec s = spec;
        if (attempt > 1) s.fatal_rank = s.fatal_step = -1;  // a new process has a new context: the error is gone
        return launch(o, o.world, headline_job(s));
      },
      o.max_restarts);
  const auto& ranks = run.attempts.back();
  if (ranks.empty()) return gpulab::kExitOk;  // an MPI rank other than 0: rank 0 reports
  if (o.supervised()) metrics.merge(supervisor_metrics(run, o.world));
  metrics.merge(headline_metrics(ranks));  // the last attempt's ranks
  if (o.print()) print_attempts(run);
  if (run.gave_up()) {
    doc["failure"] = {{"fatal_rank", o.fatal_rank}, {"fatal_step", o.fatal_step}, {"restarts", run.restarts()},
                      {"max_restarts", o.max_restarts}};
    if (o.print())
      fmt::print("FAIL: a rank exited with the fatal device status {} and no restart is left\n", kFatalDeviceExitCode);
    return gpulab::kExitCheckFailed;
  }
  if (o.supervised()) doc["restarts"] = run.restarts();
  metrics.merge(interface_metrics(ranks, o.size * dtype_size(dtype), o.world));
  if (!std::all_of(ranks.begin(), ranks.end(), finished)) return report_failure(o, ranks, doc);

  const auto h = fold_headline(ranks);
  const std::size_t elem = dtype_size(dtype);
  const double bound = ring_bound_bytes(o.size, o.world, elem);
  const double vs_bound = static_cast<double>(h.ring_max()) / bound;
  const double fewer = static_cast<double>(h.naive_max()) / static_cast<double>(h.ring_max());
  const auto fails = byte_count_failures(h, o.size, elem);
  const bool correct = h.ring_correct && h.naive_correct;
  doc["headline"] = {{"world", o.world},          {"count", o.size},          {"dtype", dtype_name(dtype)},
                     {"correct", correct},        {"expected_sum", h.expected}, {"ring_bytes_per_rank", h.ring_bytes},
                     {"naive_bytes_per_rank", h.naive_bytes}, {"bound_bytes", bound}, {"ring_vs_bound", vs_bound},
                     {"naive_over_ring", fewer}, {"byte_count_failures", fails}};
  if (const auto nics = interfaces_json(ranks, o.size * elem, o.world); !nics.is_null())
    doc["headline"]["interfaces"] = nics;
  if (o.print()) {
    fmt::print("  correctness: {} (every rank's result == sum 1..{} = {})\n", correct ? "PASS" : "FAIL", o.world,
               h.expected);
    fmt::print("  bytes/rank moved : ring={}   naive_allgather={}\n", with_commas(h.ring_max()),
               with_commas(h.naive_max()));
    fmt::print("  per-rank volume vs 2(N-1)/N*V bound: {:.2f}x  (1.00 = bandwidth-optimal)\n", vs_bound);
    fmt::print("  ring moves {:.1f}x fewer bytes than naive all-gather\n", fewer);
    for (const auto& f : fails) fmt::print("  FAIL: {}\n", f);
    print_interfaces(ranks, o.size * elem, o.world);
  }
  return correct && fails.empty() ? gpulab::kExitOk : gpulab::kExitCheckFailed;
}

// Extension 4: bytes per rank at world 2, 4, 8, 16, measured.
int run_world_sweep(const RunOptions& o, DType dtype, Json& doc) {
  const std::size_t elem = dtype_size(dtype);
  const double v = static_cast<double>(o.size * elem);
  gpulab::Table t;
  t.column("world").column("ring bytes/rank").column("ring / V").column("naive bytes/rank").column("naive / V")
      .column("naive / ring").column("check", gpulab::Table::Align::kLeft);
  Json jr = Json::array();
  bool ok = true;
  for (const int world : {2, 4, 8, 16}) {
    const HeadlineSpec spec{o.size, dtype, -1, -1};
    const auto h = fold_headline(launch_local(launch_options(o, world), headline_job(spec)));
    const bool exact = h.ring_correct && h.naive_correct && byte_count_failures(h, o.size, elem).empty();
    ok = ok && exact;
    const double ring_b = static_cast<double>(h.ring_max());
    const double naive_b = static_cast<double>(h.naive_max());
    t.row({fmt::format("{}", world), with_commas(h.ring_max()), fmt::format("{:.3f}", ring_b / v),
           with_commas(h.naive_max()), fmt::format("{:.1f}", naive_b / v), fmt::format("{:.1f}x", naive_b / ring_b),
           exact ? "PASS" : "FAIL"});
    jr.push_back({{"world", world}, {"ring_bytes_per_rank", h.ring_max()}, {"naive_bytes_per_rank", h.naive_max()},
                  {"ring_over_v", ring_b / v}, {"naive_over_v", naive_b / v}, {"exact", exact}});
  }
  doc["world_sweep"] = {{"count", o.size}, {"vector_bytes", o.size * elem}, {"rows", jr}};
  if (!o.common.json) {
    fmt::print("\nbandwidth-optimality: V = {} B per rank, measured at every world size\n", with_commas(o.size * elem));
    fmt::print("{}", t.render());
    fmt::print("ring stays below 2V (2(N-1)/N); naive grows as (N-1)V. check = sums exact and every rank's bytes == formula\n");
  }
  return ok ? gpulab::kExitOk : gpulab::kExitCheckFailed;
}

}  // namespace ring
