// Extension 2: gradient buckets all-reduced while backward compute runs,
// against the same work done one after the other.
#include <fmt/format.h>

#include "gpulab/errors.hpp"
#include "gpulab/table.hpp"
#include "ring_allreduce/commands.hpp"
#include "ring_allreduce/overlap.hpp"

namespace ring {

int run_overlap(const RunOptions& o, DType dtype, gpulab::Json& doc) {
  const OverlapSpec spec{o.size, o.buckets, o.compute_ms, o.common.quick ? 2 : 5, dtype};
  const auto ranks = launch(o, o.world, overlap_job(spec));
  if (ranks.empty()) return gpulab::kExitOk;
  const auto r = fold_overlap(ranks);
  doc["overlap"] = {{"world", o.world},         {"count", o.size},           {"buckets", o.buckets},
                    {"compute_ms_per_bucket", o.compute_ms}, {"compute_ms", r.compute * 1e3},
                    {"comm_ms", r.comm * 1e3},  {"sequential_ms", r.sequential * 1e3},
                    {"overlapped_ms", r.overlapped * 1e3},   {"hidden_ms", r.hidden() * 1e3},
                    {"hidden_fraction", r.hidden_fraction()}, {"wrong", r.wrong}};
  if (o.print()) {
    fmt::print("\nbucketed all-reduce overlapped with backward: world={}, {} {} in {} buckets, {:.1f} ms compute per bucket\n"
               "(each schedule run {} times, fastest shown; slowest rank)\n",
               o.world, o.size, dtype == DType::kF64 ? "doubles" : "floats", o.buckets, o.compute_ms, spec.reps);
    gpulab::Table t;
    t.column("schedule", gpulab::Table::Align::kLeft).column("time (ms)");
    t.row({"backward compute alone", fmt::format("{:.1f}", r.compute * 1e3)});
    t.row({fmt::format("{} bucket all-reduces alone", o.buckets), fmt::format("{:.1f}", r.comm * 1e3)});
    t.row({"backward, then all-reduce", fmt::format("{:.1f}", r.sequential * 1e3)});
    t.row({"overlapped (bucket k during k+1)", fmt::format("{:.1f}", r.overlapped * 1e3)});
    fmt::print("{}", t.render());
    fmt::print("hidden: {:.1f} ms of communication ran behind compute = {:.0f}% of the most that could hide\n",
               r.hidden() * 1e3, 100 * r.hidden_fraction());
    fmt::print("correctness: {} (every bucket's sum exact on every rank)\n", r.wrong == 0 ? "PASS" : "FAIL");
  }
  return r.wrong == 0 ? gpulab::kExitOk : gpulab::kExitCheckFailed;
}

}  // namespace ring
