// Starts N real worker processes on this machine and connects them into a
// full TCP mesh on 127.0.0.1; being on one host, they then share memory for
// the data unless told --transport tcp (transport.hpp). The parent creates every rank's listening
// socket on an ephemeral port before it forks, so each child already knows
// every peer's port: nothing is fixed that parallel runs could collide on.
// Each rank runs a job and sends its JSON report back through a pipe.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "gpulab/json.hpp"
#include "ring_allreduce/iface_select.hpp"
#include "ring_allreduce/memory_budget.hpp"
#include "ring_allreduce/transport.hpp"

namespace ring {

// Exit code of a rank that the failure demo told to exit mid-collective.
inline constexpr int kKilledExitCode = 3;

struct LaunchOptions {
  int world = 2;
  std::chrono::milliseconds timeout{0};  // collective watchdog; 0 = wait forever
  std::chrono::milliseconds setup_timeout{30'000};
  TransportOptions transport;
  // Empty: every rank on this host, over 127.0.0.1. Otherwise one network
  // namespace per rank (rank_netns.hpp): rank r runs in rank_netns[r] and
  // listens on the interface iface_spec picks there (iface_select.hpp, the
  // NCCL_SOCKET_IFNAME syntax; empty = NCCL's default rule); iface_source
  // names where the spec came from, for messages.
  std::vector<std::string> rank_netns;
  std::string iface_spec;
  std::string iface_source = "--iface";
};

// What one rank does once connected (it runs in the child process), and the
// memory it allocates there, which launch_local checks before forking. Any
// callable converts to a job with no estimate.
struct RankJob {
  std::function<gpulab::Json(Transport&)> run;
  MemoryNeed memory;

  RankJob() = default;
  template <class F>
    requires(!std::is_same_v<std::remove_cvref_t<F>, RankJob> &&
             std::is_invocable_r_v<gpulab::Json, F&, Transport&>)
  RankJob(F f, MemoryNeed need = {})  // NOLINT(google-explicit-constructor)
      : run(std::move(f)), memory(need) {}
  gpulab::Json operator()(Transport& t) const { return run(t); }
};

struct RankOutcome {
  enum class Status { kOk, kFailed, kDied };
  int rank = 0;
  Status status = Status::kDied;
  gpulab::Json report;       // kOk: what the job returned
  std::string error;         // kFailed: the rank's own one-line diagnosis; kDied: how it ended
  std::vector<int> suspects; // kFailed: ranks it found dead
  int exit_code = -1;        // -1 when killed by a signal
  double seconds = 0;        // from launch until the launcher saw the rank end
  // With rank_netns: the interface the rank's ring connections use, its
  // address, and the rule that chose it; empty otherwise.
  std::string iface;
  std::string address;
  std::string iface_rule;
};

// Runs `job` on `opts.world` forked ranks and waits for all of them. Throws
// gpulab::UsageError, before forking, when the ranks together would need more
// memory than the machine has available (memory_problem()). With a
// watchdog, once one rank has failed or died the others get the timeout plus
// a grace period to report; stragglers after that are killed, never awaited forever.
// Ranks keep their connections open until all have reported, so only a rank
// that really died closes early.
std::vector<RankOutcome> launch_local(const LaunchOptions& opts, const RankJob& job);

// Runs the job in the calling process as one rank of an already-connected
// world and turns its result or failure into the report a launcher collects.
gpulab::Json run_rank_job(Transport& t, const RankJob& job);

}  // namespace ring
