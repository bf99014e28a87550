// "CUDA error -> fatal-and-restart": a sticky device error (cudaErrorIllegalAddress
// and its kin: the CUDA context is lost, every later call in this process fails
// the same way) cannot be retried in the process that hit it. The worker exits
// with a status of its own, kFatalDeviceExitCode, and the supervisor — here the
// launcher, as torchrun or the platform's agent elsewhere — stops the gang and
// starts every rank again (a collective cannot continue with one rank new).
//
// ring-allreduce --fatal-rank R --fatal-step S injects one at the start of ring
// step S of the first attempt; --max-restarts N lets the supervisor restart N
// times. A rank that died any other way (a crash, --kill-rank) is not restarted:
// that needs a human (or a debugger) first.
#pragma once

#include <functional>
#include <vector>

#include "gpulab/prom_text.hpp"
#include "ring_allreduce/launcher.hpp"

namespace ring {

// The documented status of a worker whose device context is lost (README, runbook).
inline constexpr int kFatalDeviceExitCode = 4;

// What the worker does on a sticky error: one line on stderr saying so, then
// _exit(kFatalDeviceExitCode) — no retry, no cleanup that would touch the device.
[[noreturn]] void exit_on_fatal_device_error(int rank, int step);

// Ranks of one attempt that exited with kFatalDeviceExitCode.
std::vector<int> fatal_ranks(const std::vector<RankOutcome>& ranks);

struct Supervised {
  std::vector<std::vector<RankOutcome>> attempts;  // every attempt's outcomes, the last one last
  int max_restarts = 0;
  [[nodiscard]] int restarts() const { return static_cast<int>(attempts.size()) - 1; }
  // The last attempt still had a rank exit with the fatal status: the restarts ran out.
  [[nodiscard]] bool gave_up() const { return !fatal_ranks(attempts.back()).empty(); }
};

// Runs launch_attempt(1), and again with the next number while an attempt ends
// with a rank on kFatalDeviceExitCode and restarts are left.
Supervised supervise(const std::function<std::vector<RankOutcome>(int attempt)>& launch_attempt, int max_restarts);

// For --metrics-out, over all attempts:
//   allreduce_fatal_device_errors_total{rank}  exits with kFatalDeviceExitCode (every rank, 0 when none)
//   allreduce_restarts_total                   times the supervisor restarted the whole world
gpulab::prom::Exposition supervisor_metrics(const Supervised& s, int world);

// The failed attempts, one line per fatal rank and per survivor's diagnosis, and
// each restart; nothing when the first attempt was clean.
void print_attempts(const Supervised& s);

}  // namespace ring
