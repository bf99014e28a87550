#include "platform/slurm_script.hpp"

#include <fmt/format.h>

namespace platform {

std::string slurm_job_name(const std::string& job_id) {
  return "gpulab-" + job_id;
}

std::string shell_quote(const std::string& s) {
  const bool plain =
      !s.empty() && s.find_first_not_of(
                        "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
                        "-_./:=,@%+") == std::string::npos;
  if (plain) return s;
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

std::vector<std::string> slurm_rank_argv(const SlurmScriptInputs& in) {
  const auto& s = in.spec;
  const auto str = [](auto v) { return fmt::format("{}", v); };
  if (s.kind == JobKind::kMatmul) {
    return {"matmul",           "--backend", s.backend,           "--n",
            str(s.matmul.n),    "--chain",   str(s.matmul.chain), "--seed",
            str(s.matmul.seed), "--json"};
  }
  return {"train",
          "--slurm",
          "--backend",
          s.backend,
          "--steps",
          str(s.train.steps),
          "--seed",
          str(s.train.seed),
          "--checkpoint-dir",
          in.checkpoint_dir.string(),
          "--checkpoint-every",
          str(s.train.checkpoint_every),
          "--batch",
          str(s.train.batch),
          "--hidden",
          str(s.train.hidden),
          "--rendezvous-dir",
          (in.attempt_dir / "rendezvous").string(),
          "--address",
          in.address,
          "--json"};
}

std::string render_batch_script(const SlurmScriptInputs& in) {
  const auto& s = in.spec;
  std::string cmd = shell_quote(in.task_program.string());
  for (const auto& a : slurm_rank_argv(in)) cmd += " " + shell_quote(a);
  const std::string out = (in.attempt_dir / "batch.out").string();
  const std::string rank_out = (in.attempt_dir / "rank-%t.out").string();
  std::string script;
  script += "#!/bin/bash\n";
  script += fmt::format(
      "# gpulab job {} ({} \"{}\"), attempt {}: written by gpulabd control, submitted with "
      "sbatch\n",
      in.job_id, kind_name(s.kind), s.name, in.attempt);
  script += fmt::format("#SBATCH --job-name={}\n", slurm_job_name(in.job_id));
  script += fmt::format("#SBATCH --ntasks={}\n", s.gpus);
  if (s.nodes > 0) script += fmt::format("#SBATCH --nodes={}\n", s.nodes);
  // One device per rank, of the backend the spec names (the GRES type
  // gpulabctl slurm gres-conf writes); Slurm binds each task to its own.
  script += fmt::format("#SBATCH --gpus-per-task={}:1\n", s.backend);
  script += fmt::format("#SBATCH --output={}\n", shell_quote(out));
  script += fmt::format("#SBATCH --chdir={}\n", shell_quote(in.attempt_dir.string()));
  // gpulab restarts a failed gang itself (max_restarts, from the checkpoint);
  // a Slurm requeue behind its back would run the attempt twice.
  script += "#SBATCH --no-requeue\n";
  script += "set -eu\n";
  script += "mkdir -p rendezvous\n";
  script +=
      "echo \"gpulab: slurm job $SLURM_JOB_ID on $SLURM_JOB_NODELIST, $SLURM_NTASKS task(s), "
      "CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-}\"\n";
  // --kill-on-bad-exit: one rank dying ends the step, as a lost rank stops a
  // native gang; each rank's output in its own file for gpulabctl logs.
  // --gpu-bind=per_task:1: Slurm 22.05 binds one device per task by itself
  // only for an untyped --gpus-per-task; for a typed one every task saw an
  // empty CUDA_VISIBLE_DEVICES until this was explicit.
  // Each rank first says where it runs (stderr, same file; not a JSON line).
  script += fmt::format(
      "exec srun --kill-on-bad-exit=1 --gpu-bind=per_task:1 --output={} bash -c {} gpulab-rank "
      "{}\n",
      shell_quote(rank_out),
      shell_quote("echo \"gpulab: rank $SLURM_PROCID of $SLURM_NTASKS on $SLURMD_NODENAME, "
                  "CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-}\" >&2; exec \"$@\""),
      cmd);
  return script;
}

}  // namespace platform
