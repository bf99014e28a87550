// How often a synchronous training job should checkpoint. A GPU failure stops
// the whole job (its blast radius is every GPU in it, see blast_radius.hpp),
// so the job fails N times as often as one GPU, and each failure costs the
// work since the last checkpoint plus the restart, on all N GPUs.
//
//   job MTBF        M = per-GPU MTBF / N            (independent failures)
//   Young (1974)    tau = sqrt(2 delta M)
//   Daly (2006)     tau = sqrt(2 delta M) [1 + sqrt(delta/2M)/3 + (delta/2M)/9] - delta,  delta < 2M
//                   tau = M                                                             otherwise
//   waste           W(tau) = 1 - tau / (M e^(R/M) (e^((tau+delta)/M) - 1))
//                   (Daly's expected wall time for exponential failures: checkpoints, the work
//                   lost since the last one and a restart R per failure; Daly's tau minimises it)
#pragma once

#include <string>
#include <vector>

#include "gpulab/json.hpp"

namespace topo {

double young_interval(double checkpoint_s, double mtbf_s);
double daly_interval(double checkpoint_s, double mtbf_s);
double waste_fraction(double interval_s, double checkpoint_s, double restart_s, double mtbf_s);

struct CadenceInputs {
  double checkpoint_s = 60;  // writing one checkpoint, the job stalled (delta)
  double restart_s = 300;    // detect, reschedule, reload (R)
  // Per GPU, hours. Default: Llama 3's pre-training run, 419 unexpected interruptions in 54 days on
  // 16,384 GPUs, is one per ~50,700 GPU-hours.
  double gpu_mtbf_h = 50'000;
  std::vector<int> gpus{8, 64, 512, 4096, 16384};
};

struct CadenceRow {
  int gpus = 0;
  double job_mtbf_s = 0;
  double young_s = 0;
  double daly_s = 0;
  double waste = 0;  // at Daly's interval
  double gpu_hours_lost_per_failure = 0;  // N x (tau/2 + R)
};

struct CadenceReport {
  CadenceInputs inputs;
  std::vector<CadenceRow> rows;
};

// Throws gpulab::UsageError naming the flag for a non-positive cost or MTBF.
CadenceReport checkpoint_cadence(const CadenceInputs& in);
std::string render(const CadenceReport& r);
gpulab::Json to_json(const CadenceReport& r);

}  // namespace topo
