// What the ring-allreduce program does, one function per table it prints:
// the byte-count headline (or the failure report), the nccl-tests timing
// table, the ring/tree crossover, the overlap schedule, the world sweep and
// the straggler check. main.cpp parses flags into RunOptions and calls them in
// order; each adds its part to the --json document (and the --metrics-out
// metrics) and returns an exit status.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

#include "gpulab/common_options.hpp"
#include "gpulab/json.hpp"
#include "gpulab/prom_text.hpp"
#include "ring_allreduce/chunks.hpp"
#include "ring_allreduce/experiments.hpp"
#include "ring_allreduce/launcher.hpp"
#include "ring_allreduce/mpi_launch.hpp"

namespace ring {

struct RunOptions {
  gpulab::CommonOptions common;
  int world = 8;
  std::size_t size = 80'000;
  std::string dtype = "f64";
  std::vector<std::string> algos{"ring"};
  int iters = 0;
  int warmup = 5;
  bool sweep = false;
  std::size_t sweep_min = 1024;
  std::size_t sweep_max = 16u << 20;
  bool crossover = false;
  bool world_sweep = false;
  bool overlap = false;
  int buckets = 8;
  double compute_ms = 5.0;
  int kill_rank = -1;
  int kill_step = -1;
  int timeout_ms = 0;
  int fatal_rank = -1;    // fatal-error demo (fatal_error.hpp): this rank's device context is lost ...
  int fatal_step = -1;    // ... at the start of this ring step of the first attempt
  int max_restarts = 0;   // the supervisor restarts the world this often after a fatal exit
  int steps = 0;        // straggler check: timed steps (0: off, or kDefaultSteps with --slow-rank)
  int slow_rank = -1;   // straggler check: the rank to slow down
  double slow_factor = 5.0;
  bool slow_factor_set = false;
  bool compare_mpi = false;
  int rounds = 1;  // timing: rounds of interleaved rows, median reported
  std::string listen_addr = "127.0.0.1";
  // Ranks on separate hosts (one network namespace each) and the interface
  // their connections use: --iface, else NCCL_SOCKET_IFNAME, else NCCL's default.
  std::vector<std::string> rank_netns;
  std::string iface;
  std::string iface_env;  // NCCL_SOCKET_IFNAME as main read it
  std::string transport = "auto";
  int spin_us = -1;  // shared-memory wait: spin before sleeping (-1: auto)
  std::size_t shm_ring_bytes = kShmRingBytes;  // each shared ring; the ring all-reduce slices to half of it
  std::string metrics_out;
  const MpiSession* mpi = nullptr;  // set when mpirun started us
  // Under MPI only rank 0 reports.
  [[nodiscard]] bool root() const { return mpi == nullptr || mpi->rank() == 0; }
  [[nodiscard]] bool print() const { return root() && !common.json; }
  [[nodiscard]] bool straggler() const { return steps > 0 || slow_rank >= 0; }
  [[nodiscard]] bool supervised() const { return fatal_rank >= 0 || max_restarts > 0; }
};

// Steps the straggler check times when --slow-rank is given without --steps.
inline constexpr int kDefaultSteps = 20;

// Throws gpulab::UsageError naming the flag that is out of range.
void validate(const RunOptions& o);
// The --algo names (plus "mpi" with --compare-mpi), checked against how we were started.
std::vector<Algo> chosen_algos(const RunOptions& o);

// Forked ranks on this machine, or — under mpirun — this process as one MPI
// rank. Under MPI only rank 0 gets the outcomes; the others get none.
std::vector<RankOutcome> launch(const RunOptions& o, int world, const RankJob& job);
LaunchOptions launch_options(const RunOptions& o, int world);
// --transport, --shm-spin-us and --shm-ring-bytes; a UsageError for an unknown transport.
TransportOptions transport_options(const RunOptions& o);

int run_headline(const RunOptions& o, DType dtype, gpulab::Json& doc, gpulab::prom::Exposition& metrics);
std::vector<TimingRow> run_timing(const RunOptions& o, DType dtype, const std::vector<std::size_t>& sizes,
                                  const std::vector<Algo>& algos, int iters, gpulab::Json& doc);
bool all_right(const std::vector<TimingRow>& rows);
int run_crossover(const RunOptions& o, DType dtype, gpulab::Json& doc);
int run_overlap(const RunOptions& o, DType dtype, gpulab::Json& doc);
int run_world_sweep(const RunOptions& o, DType dtype, gpulab::Json& doc);
// Times --steps steps of compute then ring all-reduce on every rank, scores the
// ranks (straggler.hpp) and names the straggler. Exit 1 when --slow-rank was
// injected and the detector did not name exactly that rank, or a sum was wrong.
int run_straggler(const RunOptions& o, DType dtype, gpulab::Json& doc, gpulab::prom::Exposition& metrics);

}  // namespace ring
