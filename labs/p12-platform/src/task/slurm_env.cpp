#include "platform/task/slurm_env.hpp"

#include <fmt/format.h>

#include "gpulab/errors.hpp"
#include "gpulab/text.hpp"

namespace gpulab::platform::task {
namespace {

int slurm_int(const std::function<const char*(const char*)>& getenv, const char* name, int lo,
              int hi) {
  const char* v = getenv(name);
  if (v == nullptr) {
    throw UsageError(fmt::format("--slurm: {} is not set (run the rank under srun)", name));
  }
  int n = 0;
  if (!gpulab::parse_number(v, n) || n < lo || n > hi) {
    throw UsageError(
        fmt::format("--slurm: {} must be a whole number in [{}, {}], got '{}'", name, lo, hi, v));
  }
  return n;
}

}  // namespace

void apply_slurm_env(TrainOptions& o, const std::function<const char*(const char*)>& getenv) {
  if (o.rank != 0 || o.world != 1) {
    throw UsageError(
        "--slurm takes the rank and world from SLURM_PROCID and SLURM_NTASKS; drop --rank and "
        "--world");
  }
  o.world = slurm_int(getenv, "SLURM_NTASKS", 1, 256);
  o.rank = slurm_int(getenv, "SLURM_PROCID", 0, o.world - 1);
}

}  // namespace gpulab::platform::task
