// The nccl-tests-style timing table and, from it, where the ring overtakes
// the tree.
#include <fmt/format.h>

#include <algorithm>

#include "gpulab/errors.hpp"
#include "gpulab/number_format.hpp"
#include "ring_allreduce/commands.hpp"

namespace ring {

using gpulab::Json;

std::vector<TimingRow> run_timing(const RunOptions& o, DType dtype, const std::vector<std::size_t>& sizes,
                                  const std::vector<Algo>& algos, int iters, Json& doc) {
  TimingSpec spec{sizes, algos, dtype, iters, o.warmup};
  spec.both_paths = o.compare_mpi;
  spec.rounds = o.rounds;
  const auto ranks = launch(o, o.world, timing_job(spec));
  if (ranks.empty()) return {};
  const auto rows = fold_timing(ranks, o.world);
  Json jr = Json::array();
  double busbw_sum = 0;
  std::uint64_t wrong = 0;
  for (const auto& r : rows) {
    jr.push_back({{"algo", algo_name(r.algo)}, {"via", r.via}, {"size_bytes", r.bytes}, {"count", r.count},
                  {"time_us", r.seconds * 1e6}, {"algbw_GBps", r.algbw}, {"busbw_GBps", r.busbw},
                  {"memcpy_GBps", r.memcpy_GBps}, {"busbw_of_memcpy", r.busbw_of_memcpy()}, {"wrong", r.wrong},
                  {"round_time_us", [&] {
                     Json a = Json::array();
                     for (double x : r.round_seconds) a.push_back(x * 1e6);
                     return a;
                   }()}});
    busbw_sum += r.busbw;
    wrong += r.wrong;
  }
  doc["timing"] = {{"world", o.world}, {"dtype", dtype_name(dtype)}, {"iters", iters}, {"warmup", o.warmup},
                   {"rounds", o.rounds}, {"transport", o.transport}, {"rows", jr}};
  if (!o.print()) return rows;
  // What carried the ring's bytes, as the ranks reported it.
  std::string paths = "tcp";
  for (const auto& r : rows)
    if (r.algo != Algo::kMpi) {
      paths = r.via;
      break;
    }
  const std::string where = paths == "shm"   ? "over shared memory"
                            : paths == "tcp" ? (o.mpi == nullptr ? "on 127.0.0.1 TCP" : "over TCP")
                                             : "over shared memory and TCP";
  fmt::print("# nccl-tests style: world {}, {} ranks {}, out-of-place, {} iters after {} warm-up{}\n", o.world, o.world,
             where, iters, o.warmup,
             o.rounds > 1 ? fmt::format(", median of {} interleaved rounds", o.rounds) : std::string());
  fmt::print("# time = mean per all-reduce on the slowest rank; busbw = algbw * 2(N-1)/N; "
             "%memcpy = busbw / one core's memcpy\n");
  fmt::print("#{:>11}  {:>12}  {:>8}  {:>6}  {:>6}  {:>7}  {:>10}  {:>8}  {:>8}  {:>7}  {:>6}\n", "size", "count", "type",
             "redop", "algo", "via", "time", "algbw", "busbw", "%memcpy", "#wrong");
  fmt::print("#{:>11}  {:>12}  {:>8}  {:>6}  {:>6}  {:>7}  {:>10}  {:>8}  {:>8}\n", "(B)", "(elements)", "", "", "", "",
             "(us)", "(GB/s)", "(GB/s)");
  for (const auto& r : rows)
    fmt::print(" {:>11}  {:>12}  {:>8}  {:>6}  {:>6}  {:>7}  {:>10.1f}  {:>8.3f}  {:>8.3f}  {:>7.1f}  {:>6}\n", r.bytes,
               r.count, dtype_name(dtype), "sum", algo_name(r.algo), r.via, r.seconds * 1e6, r.algbw, r.busbw,
               100.0 * r.busbw_of_memcpy(), r.wrong);
  fmt::print("# Out of bounds values : {} {}\n", wrong, wrong == 0 ? "OK" : "FAIL");
  fmt::print("# Avg bus bandwidth    : {:.3f} GB/s\n", rows.empty() ? 0.0 : busbw_sum / static_cast<double>(rows.size()));
  std::vector<std::size_t> copied;
  for (const auto& r : rows)
    if (r.memcpy_GBps > 0 && std::find(copied.begin(), copied.end(), r.bytes) == copied.end()) {
      copied.push_back(r.bytes);
      fmt::print("# memcpy, one core   : {:>11} B at {:.3f} GB/s (rank 0, same run)\n", r.bytes, r.memcpy_GBps);
    }
  for (const auto& r : rows) {
    if (r.algo != Algo::kRing) continue;
    for (const auto& m : rows)
      if (m.algo == Algo::kMpi && m.bytes == r.bytes)
        fmt::print("# {:>11} B: our ring ({}) busbw / MPI_Allreduce busbw = {:.2f}x\n", r.bytes, r.via,
                   r.busbw / m.busbw);
  }
  return rows;
}

bool all_right(const std::vector<TimingRow>& rows) {
  return std::all_of(rows.begin(), rows.end(), [](const auto& r) { return r.wrong == 0; });
}

// Extension 1: ring vs tree latency from 1 KB to 10 MB and where they cross.
int run_crossover(const RunOptions& o, DType dtype, Json& doc) {
  const int iters = o.iters > 0 ? o.iters : (o.common.quick ? 3 : 10);
  Json timing;
  const auto rows = run_timing(o, dtype, crossover_sizes(o.common.quick), {Algo::kRing, Algo::kTree}, iters, timing);
  if (rows.empty()) return gpulab::kExitOk;  // an MPI rank other than 0
  const auto c = find_crossover(rows);
  doc["crossover"] = {{"timing", timing["timing"]}, {"found", c.found}, {"tree_wins_up_to_bytes", c.tree_wins_up_to},
                      {"ring_wins_from_bytes", c.ring_wins_from}};
  if (o.print()) {
    using gpulab::with_commas;
    if (c.found)
      fmt::print("crossover: the tree is faster up to {} B, the ring from {} B on (world {})\n",
                 with_commas(c.tree_wins_up_to), with_commas(c.ring_wins_from), o.world);
    else if (c.tree_wins_up_to == 0)
      fmt::print("crossover: none measured; the ring was faster at every size (world {})\n", o.world);
    else if (c.ring_wins_from == 0)
      fmt::print("crossover: none measured; the ring never stayed ahead up to the largest size (world {})\n", o.world);
    else
      fmt::print("crossover: noisy; the tree won at {} B after the ring had led (world {})\n",
                 with_commas(c.tree_wins_up_to), o.world);
  }
  return all_right(rows) ? gpulab::kExitOk : gpulab::kExitCheckFailed;
}

}  // namespace ring
