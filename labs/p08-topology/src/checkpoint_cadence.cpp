#include "topology/checkpoint_cadence.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "gpulab/errors.hpp"
#include "gpulab/table.hpp"

namespace topo {

double young_interval(double checkpoint_s, double mtbf_s) { return std::sqrt(2 * checkpoint_s * mtbf_s); }

double daly_interval(double checkpoint_s, double mtbf_s) {
  if (checkpoint_s >= 2 * mtbf_s) return mtbf_s;
  const double x = checkpoint_s / (2 * mtbf_s);
  return std::sqrt(2 * checkpoint_s * mtbf_s) * (1 + std::sqrt(x) / 3 + x / 9) - checkpoint_s;
}

double waste_fraction(double interval_s, double checkpoint_s, double restart_s, double mtbf_s) {
  const double wall_per_useful =
      mtbf_s * std::exp(restart_s / mtbf_s) * std::expm1((interval_s + checkpoint_s) / mtbf_s) / interval_s;
  return 1 - 1 / wall_per_useful;
}

CadenceReport checkpoint_cadence(const CadenceInputs& in) {
  if (!(in.checkpoint_s > 0)) throw gpulab::UsageError("--checkpoint-s must be > 0");
  if (!(in.restart_s >= 0)) throw gpulab::UsageError("--restart-s must be >= 0");
  if (!(in.gpu_mtbf_h > 0)) throw gpulab::UsageError("--gpu-mtbf-h must be > 0");
  CadenceReport r{in, {}};
  for (const int n : in.gpus) {
    CadenceRow row;
    row.gpus = n;
    row.job_mtbf_s = in.gpu_mtbf_h * 3600 / n;
    row.young_s = young_interval(in.checkpoint_s, row.job_mtbf_s);
    row.daly_s = daly_interval(in.checkpoint_s, row.job_mtbf_s);
    row.waste = waste_fraction(row.daly_s, in.checkpoint_s, in.restart_s, row.job_mtbf_s);
    row.gpu_hours_lost_per_failure = n * (row.daly_s / 2 + in.restart_s) / 3600;
    r.rows.push_back(row);
  }
  return r;
}

namespace {

// 90 s, 43.2 min, 5.1 h: the unit a reader would use.
std::string duration(double s) {
  if (s < 120) return fmt::format("{:.0f} s", s);
  if (s < 2 * 3600) return fmt::format("{:.1f} min", s / 60);
  return fmt::format("{:.1f} h", s / 3600);
}

}  // namespace

std::string render(const CadenceReport& r) {
  gpulab::Table t;
  t.column("GPUs").column("job MTBF").column("Young").column("Daly").column("waste").column("GPU-h lost/failure");
  for (const auto& row : r.rows)
    t.row({fmt::format("{}", row.gpus), duration(row.job_mtbf_s), duration(row.young_s), duration(row.daly_s),
           fmt::format("{:.1f}%", 100 * row.waste), fmt::format("{:.1f}", row.gpu_hours_lost_per_failure)});
  return fmt::format(
      "== Checkpoint cadence (Young/Daly): checkpoint {:.0f} s, restart {:.0f} s, {:.0f} h MTBF per GPU ==\n"
      "A failure stops every GPU of a synchronous job, so the job fails N times as often as one GPU.\n"
      "{}"
      "waste: the share of wall time not training (checkpoints, lost work, restarts), at Daly's interval\n",
      r.inputs.checkpoint_s, r.inputs.restart_s, r.inputs.gpu_mtbf_h, t.render());
}

gpulab::Json to_json(const CadenceReport& r) {
  gpulab::Json rows = gpulab::Json::array();
  for (const auto& row : r.rows)
    rows.push_back({{"gpus", row.gpus},
                    {"job_mtbf_s", row.job_mtbf_s},
                    {"young_interval_s", row.young_s},
                    {"daly_interval_s", row.daly_s},
                    {"waste_fraction", row.waste},
                    {"gpu_hours_lost_per_failure", row.gpu_hours_lost_per_failure}});
  return {{"checkpoint_s", r.inputs.checkpoint_s},
          {"restart_s", r.inputs.restart_s},
          {"gpu_mtbf_h", r.inputs.gpu_mtbf_h},
          {"rows", rows}};
}

}  // namespace topo
