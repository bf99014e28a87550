// A rank under srun: Slurm gives every task of a step its rank and the
// step's size in SLURM_PROCID and SLURM_NTASKS, which is how the P08 ring of
// a gang the Slurm executor started learns its place (gpulab-task train
// --slurm) instead of the --rank/--world a native agent passes.
#pragma once

#include <functional>

#include "platform/task/train_job.hpp"

namespace gpulab::platform::task {

// Sets o.rank and o.world from SLURM_PROCID and SLURM_NTASKS as `getenv`
// returns them. Throws gpulab::UsageError naming the variable when one is
// missing or not a number in range, or when --rank/--world were given too.
void apply_slurm_env(TrainOptions& o, const std::function<const char*(const char*)>& getenv);

}  // namespace gpulab::platform::task
