// The Slurm executor: how the control plane runs a job with `executor: slurm`
// on a Slurm cluster instead of its own agents. It writes the batch script
// (slurm_script.hpp) into the job's attempt directory under the state
// directory, submits it with sbatch, reads every job's state with one
// `scontrol show job -o` per poll (slurm_status.hpp says why scontrol), and
// cancels with scancel. The control plane owns the gpulab job's state; this
// class only talks to Slurm and keeps, per attempt, the files that let a
// restarted control plane pick up where it was:
//
//   STATE/slurm/<job>/attempt-<n>/batch.sh        the script as submitted
//                                 slurm_job_id    sbatch's answer
//                                 ended           Slurm reported a final state
//                                 cancel_sent     scancel succeeded
//                                 batch.out, rank-<r>.out, rendezvous/
//
// Every command runs with a timeout and without the control plane's lock.
#pragma once

#include <chrono>
#include <filesystem>
#include <map>
#include <string>

#include "gpulab/json.hpp"
#include "platform/job_spec.hpp"
#include "platform/slurm_status.hpp"

namespace platform {

struct SlurmOptions {
  std::filesystem::path
      task_program;  // as compute nodes see it; default gpulab-task beside this executable
  // The ranks' listen address: "auto" (each rank its node's address toward
  // the batch host; one node or many), or one address for all (one node).
  std::string address = "auto";
  std::chrono::milliseconds poll_interval{1000};
  std::chrono::milliseconds command_timeout{30000};
  std::string sbatch = "sbatch";
  std::string scontrol = "scontrol";
  std::string scancel = "scancel";
};

// What the files of one attempt say.
struct SlurmAttempt {
  std::string slurm_id;  // empty: never submitted
  bool ended = false;
  bool cancel_sent = false;
};

class SlurmExecutor {
 public:
  SlurmExecutor(SlurmOptions options, std::filesystem::path state_dir);

  // Empty when sbatch, scontrol and scancel are on PATH and the task program
  // exists; else why not, in words a 400 can carry.
  [[nodiscard]] std::string unavailable() const;
  // `sbatch --test-only` of the spec's script: empty when Slurm would take
  // the job, else sbatch's error line (no node with that many devices of
  // that type, say).
  [[nodiscard]] std::string test_only(const JobSpec& spec) const;
  // Writes the attempt's script and submits it. Returns the Slurm job id;
  // throws gpulab::RunError with sbatch's error line.
  std::string submit(const std::string& job_id, int attempt, const JobSpec& spec) const;
  // scancel; empty on success, else scancel's error line.
  [[nodiscard]] std::string cancel(const std::string& job_id, int attempt) const;
  // Every job slurmctld holds. Throws gpulab::RunError when scontrol fails.
  [[nodiscard]] std::map<std::string, SlurmJobStatus> poll() const;

  [[nodiscard]] SlurmAttempt attempt(const std::string& job_id, int attempt) const;
  void mark_ended(const std::string& job_id, int attempt) const;
  [[nodiscard]] std::filesystem::path attempt_dir(const std::string& job_id, int attempt) const;
  // The batch output, then each rank's, with headers like gpulabctl logs'.
  [[nodiscard]] std::string logs(const std::string& job_id, int attempt, int ranks) const;
  // Rank 0's "done" line (null when it printed none).
  [[nodiscard]] gpulab::Json result(const std::string& job_id, int attempt) const;
  [[nodiscard]] const SlurmOptions& options() const { return options_; }

 private:
  SlurmOptions options_;
  std::filesystem::path state_dir_;
};

}  // namespace platform
