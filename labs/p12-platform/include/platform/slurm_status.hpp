// What Slurm says about its jobs, read from `scontrol show job -o` (one line
// per job of key=value pairs), and how a Slurm job state maps onto a gpulab
// job state.
//
// Why scontrol and not squeue or sacct: one call returns every job slurmctld
// holds — running ones and, for MinJobAge (300 s by default) after they end,
// finished ones — with the state, the reason and the exit code. squeue has no
// exit code; sacct has it only where slurmdbd keeps accounting, which a small
// site (and the test cluster) does not run.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "platform/model.hpp"

namespace platform {

struct SlurmJobStatus {
  std::string id;      // JobId
  std::string name;    // JobName
  std::string state;   // JobState: PENDING, RUNNING, COMPLETED, FAILED, CANCELLED, ...
  std::string reason;  // Reason ("None", "Resources", "NonZeroExitCode")
  int exit_code = 0;   // ExitCode=E:S, the batch script's exit status
  int signal = 0;      //   and the signal that ended it
  std::string nodes;   // NodeList ("(null)" while pending)
};

// Every job of the text, by id. Lines that hold no JobId (the "No jobs in
// the system" answer) are skipped; a value with blanks (a Reason) is kept
// whole up to the next key.
std::map<std::string, SlurmJobStatus> parse_scontrol_jobs(std::string_view text);

// The gpulab state a Slurm state mirrors to: pending (PENDING, CONFIGURING,
// REQUEUED, ...), running (RUNNING, COMPLETING, SUSPENDED), succeeded
// (COMPLETED), cancelled (CANCELLED), failed (FAILED, TIMEOUT, NODE_FAIL,
// OUT_OF_MEMORY, BOOT_FAIL, DEADLINE, PREEMPTED). nullopt for a state this
// table does not know: the job keeps its state and the reason says so.
std::optional<JobState> mirror_state(std::string_view slurm_state);

}  // namespace platform
