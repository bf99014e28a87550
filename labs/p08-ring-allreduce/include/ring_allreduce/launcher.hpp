// Starts N real worker processes on this machine and connects them into a
// full TCP mesh on 127.0.0.1. The parent creates every rank's listening
// socket on an ephemeral port before it forks, so each child already knows
// every peer's port: nothing is fixed that parallel runs could collide on.
// Each rank runs a job and sends its JSON report back through a pipe.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "gpulab/json.hpp"
#include "ring_allreduce/transport.hpp"

namespace ring {

// Exit code of a rank that the failure demo told to exit mid-collective.
inline constexpr int kKilledExitCode = 3;

struct LaunchOptions {
  int world = 2;
  std::chrono::milliseconds timeout{0};  // collective watchdog; 0 = wait forever
  std::chrono::milliseconds setup_timeout{30'000};
};

// What one rank does once connected. Runs in the child process.
using RankJob = std::function<gpulab::Json(Transport&)>;

struct RankOutcome {
  enum class Status { kOk, kFailed, kDied };
  int rank = 0;
  Status status = Status::kDied;
  gpulab::Json report;       // kOk: what the job returned
  std::string error;         // kFailed: the rank's own one-line diagnosis; kDied: how it ended
  std::vector<int> suspects; // kFailed: ranks it found dead
  int exit_code = -1;        // -1 when killed by a signal
  double seconds = 0;        // from launch until the launcher saw the rank end
};

// Runs `job` on `opts.world` forked ranks and waits for all of them. With a
// watchdog, once one rank has failed or died the others get the timeout plus
// a grace period to report; stragglers after that are killed, never awaited forever.
// Ranks keep their connections open until all have reported, so only a rank
// that really died closes early.
std::vector<RankOutcome> launch_local(const LaunchOptions& opts, const RankJob& job);

// Runs the job in the calling process as one rank of an already-connected
// world and turns its result or failure into the report a launcher collects.
gpulab::Json run_rank_job(Transport& t, const RankJob& job);

}  // namespace ring
