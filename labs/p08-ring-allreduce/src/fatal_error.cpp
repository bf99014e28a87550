#include "ring_allreduce/fatal_error.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <string>

namespace ring {

void exit_on_fatal_device_error(int rank, int step) {
  // What a CUDA worker sees after cudaErrorIllegalAddress: every call returns it again.
  fmt::print(stderr,
             "ring-allreduce: rank {}: fatal device error at ring step {} (injected: like cudaErrorIllegalAddress, "
             "the context is lost); exiting with status {} for a restart\n",
             rank, step, kFatalDeviceExitCode);
  std::fflush(stderr);
  ::_exit(kFatalDeviceExitCode);
}

std::vector<int> fatal_ranks(const std::vector<RankOutcome>& ranks) {
  std::vector<int> out;
  for (const auto& r : ranks)
    if (r.status == RankOutcome::Status::kDied && r.exit_code == kFatalDeviceExitCode) out.push_back(r.rank);
  return out;
}

Supervised supervise(const std::function<std::vector<RankOutcome>(int attempt)>& launch_attempt, int max_restarts) {
  Supervised s;
  s.max_restarts = max_restarts;
  for (int attempt = 1;; ++attempt) {
    s.attempts.push_back(launch_attempt(attempt));
    if (s.attempts.back().empty() || fatal_ranks(s.attempts.back()).empty() || s.restarts() >= max_restarts) break;
  }
  return s;
}

gpulab::prom::Exposition supervisor_metrics(const Supervised& s, int world) {
  gpulab::prom::Exposition e;
  auto& fatal = e.counter("allreduce_fatal_device_errors_total",
                          "Times this rank exited with the fatal-device status (4): its device context was lost.");
  for (int r = 0; r < world; ++r) fatal.set({{"rank", std::to_string(r)}}, 0);
  for (const auto& attempt : s.attempts)
    for (int r : fatal_ranks(attempt)) fatal.inc({{"rank", std::to_string(r)}}, 1);
  e.counter("allreduce_restarts_total", "Times the supervisor restarted every rank after a fatal device error.")
      .set({}, s.restarts());
  return e;
}

void print_attempts(const Supervised& s) {
  for (std::size_t a = 0; a < s.attempts.size(); ++a) {
    const auto fatal = fatal_ranks(s.attempts[a]);
    if (fatal.empty()) continue;
    for (const auto& r : s.attempts[a]) {
      if (r.exit_code == kFatalDeviceExitCode && r.status == RankOutcome::Status::kDied)
        fmt::print("  attempt {}: rank {} exited with status {}: fatal device error, the process cannot recover\n",
                   a + 1, r.rank, kFatalDeviceExitCode);
      else if (r.status == RankOutcome::Status::kFailed)
        fmt::print("  attempt {}: rank {}: {}\n", a + 1, r.rank, r.error);
      else if (r.status == RankOutcome::Status::kDied)
        fmt::print("  attempt {}: rank {}: {}\n", a + 1, r.rank, r.error);
    }
    if (a + 1 < s.attempts.size())
      fmt::print("  supervisor: restarting all {} ranks (restart {} of at most {})\n", s.attempts[a].size(), a + 1,
                 s.max_restarts);
    else
      fmt::print("  supervisor: no restart left (--max-restarts {})\n", s.max_restarts);
  }
}

}  // namespace ring
