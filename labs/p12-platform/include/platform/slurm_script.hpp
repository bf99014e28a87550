// The batch script the control plane hands to sbatch for a job with
// `executor: slurm`: one allocation of `gpus` tasks, each with one GRES gpu
// of the spec's backend type (so Slurm sets CUDA_VISIBLE_DEVICES per task),
// over exactly `nodes` nodes when the spec names them (--nodes), and one srun
// step that starts every rank of gpulab-task at once. Ranks take
// their rank and world from SLURM_PROCID / SLURM_NTASKS (gpulab-task
// --slurm), find each other through a rendezvous directory of this attempt,
// and checkpoint where the native executor's ranks do, so a job can move
// between executors' restarts without losing steps. Each rank listens on its
// own node's address (--address auto), so a ring across nodes crosses the
// network between them.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "platform/job_spec.hpp"

namespace platform {

struct SlurmScriptInputs {
  std::string job_id;  // "j-000007"
  int attempt = 1;
  JobSpec spec;
  std::filesystem::path task_program;    // gpulab-task, as the compute nodes see it
  std::filesystem::path attempt_dir;     // batch.out, rank-<R>.out, the rendezvous directory
  std::filesystem::path checkpoint_dir;  // train jobs
  // What ranks listen on: "auto" (each its node's address toward the batch
  // host, gpulab-task --address auto), or one IPv4 address for every rank.
  std::string address = "auto";
};

// The Slurm job name of a gpulab job: how squeue and scontrol show it.
std::string slurm_job_name(const std::string& job_id);

// gpulab-task's arguments for every rank (after the program name).
std::vector<std::string> slurm_rank_argv(const SlurmScriptInputs& in);

// The whole script, #SBATCH lines first. Every argument is shell-quoted.
std::string render_batch_script(const SlurmScriptInputs& in);

// `s` quoted for bash ('...' with embedded quotes escaped).
std::string shell_quote(const std::string& s);

}  // namespace platform
