// What the ranks run for each part of the lab, and how the launcher folds the
// per-rank reports into one result. Every number printed comes from here:
// byte counts are read from the transport's counters, times from the ranks'
// clocks, correctness from comparing each element with the exact sum.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ring_allreduce/collectives.hpp"
#include "ring_allreduce/launcher.hpp"
#include "ring_allreduce/wire.hpp"

namespace ring {

// ---- the curriculum's block: one ring and one naive all-reduce, bytes counted
struct HeadlineSpec {
  std::size_t count = 80'000;  // elements per rank
  DType dtype = DType::kF64;
  int kill_rank = -1;  // failure demo: this rank exits at the start of ring step kill_step
  int kill_step = -1;
  // fatal-error demo: this rank hits an injected sticky device error at the start
  // of ring step fatal_step and exits with kFatalDeviceExitCode (fatal_error.hpp)
  int fatal_rank = -1;
  int fatal_step = -1;
};
RankJob headline_job(const HeadlineSpec& spec);

struct Headline {
  int world = 0;
  double expected = 0;  // every element's exact sum, 1 + 2 + ... + N
  bool ring_correct = false;
  bool naive_correct = false;
  std::vector<std::uint64_t> ring_bytes;   // per rank, measured
  std::vector<std::uint64_t> naive_bytes;  // per rank, measured
  [[nodiscard]] std::uint64_t ring_max() const;
  [[nodiscard]] std::uint64_t naive_max() const;
};
// Throws RunError-like std::runtime_error when a rank did not report.
Headline fold_headline(const std::vector<RankOutcome>& ranks);
// The byte counts every rank must have written for `count` elements of
// `elem_bytes`: empty when each equals its exact formula, else one line per
// rank and algorithm that does not.
std::vector<std::string> byte_count_failures(const Headline& h, std::size_t count, std::size_t elem_bytes);

// ---- nccl-tests-style timing
struct TimingSpec {
  std::vector<std::size_t> sizes_bytes;
  std::vector<Algo> algos{Algo::kRing};
  DType dtype = DType::kF64;
  int iters = 20;
  int warmup = 5;
  // Time the ring over both paths, shared memory and TCP, when the ranks
  // share memory (--compare-mpi: each against the MPI row of the same run).
  bool both_paths = false;
  // Every row is timed this many times, the rows of one size interleaved
  // (shm, tcp, mpi, shm, tcp, mpi, ...); the median counts.
  int rounds = 1;
};
RankJob timing_job(const TimingSpec& spec);

struct TimingRow {
  Algo algo = Algo::kRing;
  std::string via;         // the data path: "shm", "tcp", "shm+tcp"; "mpi" for MPI_Allreduce
  std::size_t bytes = 0;
  std::size_t count = 0;
  double seconds = 0;      // per all-reduce, slowest rank; the median over rounds
  double algbw = 0;        // GB/s (1e9 B/s): bytes / seconds
  double busbw = 0;        // GB/s: algbw * 2(N-1)/N, nccl-tests' AllReduce factor
  std::uint64_t wrong = 0; // elements that differ from the exact sum, all ranks
  std::vector<double> round_seconds;  // slowest rank, per round
  double memcpy_GBps = 0;  // single-core memcpy of `bytes` on rank 0, same run (median over rounds)
  [[nodiscard]] double busbw_of_memcpy() const { return memcpy_GBps > 0 ? busbw / memcpy_GBps : 0; }
};
std::vector<TimingRow> fold_timing(const std::vector<RankOutcome>& ranks, int world);

// nccl-tests' AllReduce bus-bandwidth factor.
double busbw_factor(int world);

// Sizes 1 KiB ... max, doubling.
std::vector<std::size_t> doubling_sizes(std::size_t min_bytes, std::size_t max_bytes);

// Ring vs tree: the message sizes of the latency crossover (1 KB ... 10 MB,
// half-decade steps) and where the two curves cross.
std::vector<std::size_t> crossover_sizes(bool quick);
struct Crossover {
  bool found = false;
  std::size_t tree_wins_up_to = 0;  // largest size where the tree was faster (0: never)
  std::size_t ring_wins_from = 0;   // smallest size from which the ring stays faster (0: never)
};
// `rows` holds ring and tree rows for the same sizes.
Crossover find_crossover(const std::vector<TimingRow>& rows);

// A one-line summary of every rank that did not finish, for the FAIL line.
std::string describe_failures(const std::vector<RankOutcome>& ranks);

}  // namespace ring
