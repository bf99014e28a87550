// ring-allreduce: N real processes reduce a vector over TCP on 127.0.0.1 with
// the ring algorithm NCCL uses, count every payload byte they write, and time
// it the way nccl-tests does.
#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <cstdio>
#include <string>
#include <vector>

#include "gpulab/cli.hpp"
#include "gpulab/json.hpp"
#include "gpulab/table.hpp"
#include "ring_allreduce/chunks.hpp"
#include "ring_allreduce/experiments.hpp"
#include "ring_allreduce/metrics.hpp"
#include "ring_allreduce/mpi_launch.hpp"
#include "ring_allreduce/overlap.hpp"

namespace {

using gpulab::Json;
using ring::Algo;
using ring::DType;

struct Options {
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
  bool compare_mpi = false;
  std::string listen_addr = "127.0.0.1";
  std::string metrics_out;
  const ring::MpiSession* mpi = nullptr;  // set when mpirun started us
  [[nodiscard]] bool root() const { return mpi == nullptr || mpi->rank() == 0; }
  [[nodiscard]] bool print() const { return root() && !common.json; }
};


std::string grouped(std::uint64_t v) {
  std::string digits = std::to_string(v);
  for (int i = static_cast<int>(digits.size()) - 3; i > 0; i -= 3) digits.insert(static_cast<std::size_t>(i), ",");
  return digits;
}

ring::LaunchOptions launch_options(const Options& o, int world) {
  ring::LaunchOptions l;
  l.world = world;
  l.timeout = std::chrono::milliseconds(o.timeout_ms);
  return l;
}

// Forked ranks on this machine, or — under mpirun — this process as one MPI rank.
// Under MPI only rank 0 gets the outcomes; the others get an empty vector.
std::vector<ring::RankOutcome> launch(const Options& o, int world, const ring::RankJob& job) {
  if (o.mpi != nullptr) return ring::launch_mpi(*o.mpi, o.listen_addr, std::chrono::milliseconds(o.timeout_ms), job);
  return ring::launch_local(launch_options(o, world), job);
}

// The curriculum's block, or the failure report when a rank did not finish.
int run_headline(const Options& o, DType dtype, Json& doc) {
  const ring::HeadlineSpec spec{o.size, dtype, o.kill_rank, o.kill_step};
  const std::string type = dtype == DType::kF64 ? "doubles" : "floats";
  if (o.print()) fmt::print("ring all-reduce: world={}, vector={} {}\n", o.world, o.size, type);
  if (o.print() && o.mpi != nullptr)
    fmt::print("  launched by mpirun: rank and world from MPI, TCP endpoints swapped with MPI_Allgather ({})\n",
               o.mpi->library());
  if (o.kill_rank >= 0 && o.timeout_ms == 0)
    fmt::print(stderr,
               "ring-allreduce: warning: rank {} will exit mid-collective and there is no --timeout-ms: "
               "the survivors will wait forever, like NCCL without NCCL_TIMEOUT (Ctrl-C to stop)\n",
               o.kill_rank);
  std::fflush(stdout);
  const auto ranks = launch(o, o.world, ring::headline_job(spec));
  if (ranks.empty()) return gpulab::kExitOk;  // an MPI rank other than 0: rank 0 reports
  if (!o.metrics_out.empty()) ring::write_metrics_file(o.metrics_out, ranks);

  const bool all_ok = std::all_of(ranks.begin(), ranks.end(),
                                  [](const auto& r) { return r.status == ring::RankOutcome::Status::kOk; });
  if (!all_ok) {
    Json jr = Json::array();
    std::vector<int> detected;
    const auto finished = std::count_if(ranks.begin(), ranks.end(),
                                        [](const auto& r) { return r.status == ring::RankOutcome::Status::kOk; });
    for (const auto& r : ranks) {
      const bool named = std::find(r.suspects.begin(), r.suspects.end(), o.kill_rank) != r.suspects.end();
      if (r.status == ring::RankOutcome::Status::kFailed && named) detected.push_back(r.rank);
      const char* status = r.status == ring::RankOutcome::Status::kFailed ? "failed" : "died";
      jr.push_back({{"rank", r.rank}, {"status", status}, {"seconds", r.seconds}, {"error", r.error},
                    {"suspects", r.suspects}});
      if (o.common.json) continue;
      if (r.rank == o.kill_rank && r.exit_code == ring::kKilledExitCode)
        fmt::print("  rank {}: exited at the start of step {} (--kill-rank {} --kill-step {})\n", r.rank, o.kill_step,
                   o.kill_rank, o.kill_step);
      else
        fmt::print("  rank {}: {} after {:.2f} s: {}\n", r.rank, r.status == ring::RankOutcome::Status::kOk ? "finished" : status,
                   r.seconds, r.status == ring::RankOutcome::Status::kOk ? "ok" : r.error);
    }
    doc["failure"] = {{"kill_rank", o.kill_rank}, {"kill_step", o.kill_step}, {"timeout_ms", o.timeout_ms},
                      {"ranks", jr}, {"survivors_naming_culprit", detected}, {"survivors_finished", finished}};
    if (!o.common.json) {
      if (o.kill_rank >= 0)
        fmt::print("FAIL: rank {} died mid-collective; {} of {} survivors detected it and named it, {} finished first "
                   "(watchdog {} ms)\n",
                   o.kill_rank, detected.size(), o.world - 1, finished, o.timeout_ms);
      else
        fmt::print("FAIL: the all-reduce did not complete: {}\n", ring::describe_failures(ranks));
    }
    return gpulab::kExitCheckFailed;
  }

  const auto h = ring::fold_headline(ranks);
  const std::size_t elem = ring::dtype_size(dtype);
  const double bound = ring::ring_bound_bytes(o.size, o.world, elem);
  const double vs_bound = static_cast<double>(h.ring_max()) / bound;
  const double fewer = static_cast<double>(h.naive_max()) / static_cast<double>(h.ring_max());
  std::vector<std::string> fails;
  for (int r = 0; r < o.world; ++r) {
    const auto exact = ring::ring_bytes_sent(o.size, o.world, r, elem);
    if (h.ring_bytes[r] != exact)
      fails.push_back(fmt::format("rank {} wrote {} ring bytes, the exact formula says {}", r, h.ring_bytes[r], exact));
    const auto naive = ring::naive_bytes_sent(o.size, o.world, elem);
    if (h.naive_bytes[r] != naive)
      fails.push_back(fmt::format("rank {} wrote {} naive bytes, (N-1)*V is {}", r, h.naive_bytes[r], naive));
  }
  const bool correct = h.ring_correct && h.naive_correct;
  doc["headline"] = {{"world", o.world},          {"count", o.size},          {"dtype", ring::dtype_name(dtype)},
                     {"correct", correct},        {"expected_sum", h.expected}, {"ring_bytes_per_rank", h.ring_bytes},
                     {"naive_bytes_per_rank", h.naive_bytes}, {"bound_bytes", bound}, {"ring_vs_bound", vs_bound},
                     {"naive_over_ring", fewer}, {"byte_count_failures", fails}};
  if (o.print()) {
    fmt::print("  correctness: {} (every rank's result == sum 1..{} = {})\n", correct ? "PASS" : "FAIL", o.world,
               h.expected);
    fmt::print("  bytes/rank moved : ring={}   naive_allgather={}\n", grouped(h.ring_max()), grouped(h.naive_max()));
    fmt::print("  per-rank volume vs 2(N-1)/N*V bound: {:.2f}x  (1.00 = bandwidth-optimal)\n", vs_bound);
    fmt::print("  ring moves {:.1f}x fewer bytes than naive all-gather\n", fewer);
    for (const auto& f : fails) fmt::print("  FAIL: {}\n", f);
  }
  return correct && fails.empty() ? gpulab::kExitOk : gpulab::kExitCheckFailed;
}

std::vector<ring::TimingRow> run_timing(const Options& o, DType dtype, const std::vector<std::size_t>& sizes,
                                        const std::vector<Algo>& algos, int iters, Json& doc) {
  ring::TimingSpec spec{sizes, algos, dtype, iters, o.warmup};
  const auto ranks = launch(o, o.world, ring::timing_job(spec));
  if (ranks.empty()) return {};
  const auto rows = ring::fold_timing(ranks, o.world);
  Json jr = Json::array();
  double busbw_sum = 0;
  std::uint64_t wrong = 0;
  for (const auto& r : rows) {
    jr.push_back({{"algo", ring::algo_name(r.algo)}, {"size_bytes", r.bytes}, {"count", r.count},
                  {"time_us", r.seconds * 1e6}, {"algbw_GBps", r.algbw}, {"busbw_GBps", r.busbw}, {"wrong", r.wrong}});
    busbw_sum += r.busbw;
    wrong += r.wrong;
  }
  doc["timing"] = {{"world", o.world}, {"dtype", ring::dtype_name(dtype)}, {"iters", iters}, {"warmup", o.warmup},
                   {"rows", jr}};
  if (o.print()) {
    fmt::print("# nccl-tests style: world {}, {} ranks on 127.0.0.1 TCP, out-of-place, {} iters after {} warm-up\n",
               o.world, o.world, iters, o.warmup);
    fmt::print("# time = mean per all-reduce on the slowest rank; busbw = algbw * 2(N-1)/N\n");
    fmt::print("#{:>11}  {:>12}  {:>8}  {:>6}  {:>6}  {:>10}  {:>8}  {:>8}  {:>6}\n", "size", "count", "type", "redop",
               "algo", "time", "algbw", "busbw", "#wrong");
    fmt::print("#{:>11}  {:>12}  {:>8}  {:>6}  {:>6}  {:>10}  {:>8}  {:>8}\n", "(B)", "(elements)", "", "", "",
               "(us)", "(GB/s)", "(GB/s)");
    for (const auto& r : rows)
      fmt::print(" {:>11}  {:>12}  {:>8}  {:>6}  {:>6}  {:>10.1f}  {:>8.3f}  {:>8.3f}  {:>6}\n", r.bytes, r.count,
                 ring::dtype_name(dtype), "sum", ring::algo_name(r.algo), r.seconds * 1e6, r.algbw, r.busbw, r.wrong);
    fmt::print("# Out of bounds values : {} {}\n", wrong, wrong == 0 ? "OK" : "FAIL");
    fmt::print("# Avg bus bandwidth    : {:.3f} GB/s\n", rows.empty() ? 0.0 : busbw_sum / static_cast<double>(rows.size()));
    for (const auto& r : rows) {
      if (r.algo != Algo::kRing) continue;
      for (const auto& m : rows)
        if (m.algo == Algo::kMpi && m.bytes == r.bytes)
          fmt::print("# {:>11} B: our ring busbw / MPI_Allreduce busbw = {:.2f}x\n", r.bytes, r.busbw / m.busbw);
    }
  }
  return rows;
}

bool all_right(const std::vector<ring::TimingRow>& rows) {
  return std::all_of(rows.begin(), rows.end(), [](const auto& r) { return r.wrong == 0; });
}

// Extension 1: ring vs tree latency from 1 KB to 10 MB and where they cross.
int run_crossover(const Options& o, DType dtype, Json& doc) {
  const int iters = o.iters > 0 ? o.iters : (o.common.quick ? 3 : 10);
  Json timing;
  const auto rows = run_timing(o, dtype, ring::crossover_sizes(o.common.quick), {Algo::kRing, Algo::kTree}, iters, timing);
  if (rows.empty()) return gpulab::kExitOk;  // an MPI rank other than 0
  const auto c = ring::find_crossover(rows);
  doc["crossover"] = {{"timing", timing["timing"]}, {"found", c.found}, {"tree_wins_up_to_bytes", c.tree_wins_up_to},
                      {"ring_wins_from_bytes", c.ring_wins_from}};
  if (o.print()) {
    if (c.found)
      fmt::print("crossover: the tree is faster up to {} B, the ring from {} B on (world {})\n", grouped(c.tree_wins_up_to),
                 grouped(c.ring_wins_from), o.world);
    else if (c.tree_wins_up_to == 0)
      fmt::print("crossover: none measured; the ring was faster at every size (world {})\n", o.world);
    else if (c.ring_wins_from == 0)
      fmt::print("crossover: none measured; the ring never stayed ahead up to the largest size (world {})\n", o.world);
    else
      fmt::print("crossover: noisy; the tree won at {} B after the ring had led (world {})\n", grouped(c.tree_wins_up_to),
                 o.world);
  }
  return all_right(rows) ? gpulab::kExitOk : gpulab::kExitCheckFailed;
}

// Extension 2: gradient buckets all-reduced while backward compute runs.
int run_overlap(const Options& o, DType dtype, Json& doc) {
  const ring::OverlapSpec spec{o.size, o.buckets, o.compute_ms, o.common.quick ? 2 : 5, dtype};
  const auto ranks = launch(o, o.world, ring::overlap_job(spec));
  if (ranks.empty()) return gpulab::kExitOk;
  const auto r = ring::fold_overlap(ranks);
  doc["overlap"] = {{"world", o.world},         {"count", o.size},           {"buckets", o.buckets},
                    {"compute_ms_per_bucket", o.compute_ms}, {"compute_ms", r.compute * 1e3},
                    {"comm_ms", r.comm * 1e3},  {"sequential_ms", r.sequential * 1e3},
                    {"overlapped_ms", r.overlapped * 1e3},   {"hidden_ms", r.hidden() * 1e3},
                    {"hidden_fraction", r.hidden_fraction()}, {"wrong", r.wrong}};
  if (o.print()) {
    fmt::print("\nbucketed all-reduce overlapped with backward: world={}, {} {} in {} buckets, {:.1f} ms compute per bucket\n"
               "(each schedule run {} times, fastest shown; slowest rank)\n",
               o.world, o.size, dtype == DType::kF64 ? "doubles" : "floats", o.buckets, o.compute_ms, spec.reps);
    gpulab::Table t;
    t.column("schedule", gpulab::Table::Align::kLeft).column("time (ms)");
    t.row({"backward compute alone", fmt::format("{:.1f}", r.compute * 1e3)});
    t.row({fmt::format("{} bucket all-reduces alone", o.buckets), fmt::format("{:.1f}", r.comm * 1e3)});
    t.row({"backward, then all-reduce", fmt::format("{:.1f}", r.sequential * 1e3)});
    t.row({"overlapped (bucket k during k+1)", fmt::format("{:.1f}", r.overlapped * 1e3)});
    fmt::print("{}", t.render());
    fmt::print("hidden: {:.1f} ms of communication ran behind compute = {:.0f}% of the most that could hide\n",
               r.hidden() * 1e3, 100 * r.hidden_fraction());
    fmt::print("correctness: {} (every bucket's sum exact on every rank)\n", r.wrong == 0 ? "PASS" : "FAIL");
  }
  return r.wrong == 0 ? gpulab::kExitOk : gpulab::kExitCheckFailed;
}

// Extension 4: bytes per rank at world 2, 4, 8, 16, measured.
int run_world_sweep(const Options& o, DType dtype, Json& doc) {
  const std::size_t elem = ring::dtype_size(dtype);
  const double v = static_cast<double>(o.size * elem);
  gpulab::Table t;
  t.column("world").column("ring bytes/rank").column("ring / V").column("naive bytes/rank").column("naive / V")
      .column("naive / ring").column("check", gpulab::Table::Align::kLeft);
  Json jr = Json::array();
  bool ok = true;
  for (const int world : {2, 4, 8, 16}) {
    const ring::HeadlineSpec spec{o.size, dtype, -1, -1};
    const auto h = ring::fold_headline(ring::launch_local(launch_options(o, world), ring::headline_job(spec)));
    bool exact = h.ring_correct && h.naive_correct;
    for (int r = 0; r < world; ++r)
      exact = exact && h.ring_bytes[static_cast<std::size_t>(r)] == ring::ring_bytes_sent(o.size, world, r, elem) &&
              h.naive_bytes[static_cast<std::size_t>(r)] == ring::naive_bytes_sent(o.size, world, elem);
    ok = ok && exact;
    const double ring_b = static_cast<double>(h.ring_max());
    const double naive_b = static_cast<double>(h.naive_max());
    t.row({fmt::format("{}", world), grouped(h.ring_max()), fmt::format("{:.3f}", ring_b / v), grouped(h.naive_max()),
           fmt::format("{:.1f}", naive_b / v), fmt::format("{:.1f}x", naive_b / ring_b), exact ? "PASS" : "FAIL"});
    jr.push_back({{"world", world}, {"ring_bytes_per_rank", h.ring_max()}, {"naive_bytes_per_rank", h.naive_max()},
                  {"ring_over_v", ring_b / v}, {"naive_over_v", naive_b / v}, {"exact", exact}});
  }
  doc["world_sweep"] = {{"count", o.size}, {"vector_bytes", o.size * elem}, {"rows", jr}};
  if (!o.common.json) {
    fmt::print("\nbandwidth-optimality: V = {} B per rank, measured at every world size\n", grouped(o.size * elem));
    fmt::print("{}", t.render());
    fmt::print("ring stays below 2V (2(N-1)/N); naive grows as (N-1)V. check = sums exact and every rank's bytes == formula\n");
  }
  return ok ? gpulab::kExitOk : gpulab::kExitCheckFailed;
}

void validate(const Options& o) {
  if (o.world < 2 || o.world > 64) throw gpulab::UsageError(fmt::format("--world {} is out of range: use 2..64 ranks", o.world));
  if (o.size == 0) throw gpulab::UsageError("--size 0: the vector needs at least one element");
  if (o.size > (std::size_t{1} << 27))
    throw gpulab::UsageError(fmt::format("--size {} is too large for this demo (at most 134217728 elements)", o.size));
  if (o.iters < 0 || o.warmup < 0) throw gpulab::UsageError("--iters and --warmup must be >= 0");
  if (o.timeout_ms < 0) throw gpulab::UsageError("--timeout-ms must be >= 0 (0 = wait forever)");
  if ((o.kill_rank >= 0) != (o.kill_step >= 0))
    throw gpulab::UsageError("--kill-rank and --kill-step go together");
  if (o.kill_rank >= o.world)
    throw gpulab::UsageError(fmt::format("--kill-rank {} is not a rank of a world of {}", o.kill_rank, o.world));
  const int steps = ring::step_count(Algo::kRing, o.world);
  if (o.kill_step >= steps)
    throw gpulab::UsageError(fmt::format("--kill-step {}: a ring all-reduce on {} ranks has steps 0..{}", o.kill_step,
                                         o.world, steps - 1));
  if (o.buckets < 1 || o.buckets > 4096) throw gpulab::UsageError("--buckets must be 1..4096");
  if (!(o.compute_ms >= 0) || o.compute_ms > 10'000) throw gpulab::UsageError("--compute-ms must be 0..10000");
  if (o.sweep_min == 0 || o.sweep_min > o.sweep_max || o.sweep_max > (std::size_t{1} << 30))
    throw gpulab::UsageError("--sweep-min/--sweep-max: need 0 < min <= max <= 1 GiB");
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "Ring all-reduce over real TCP sockets between real processes on 127.0.0.1.\n"
      "Proves the 2(N-1)/N*V bytes-per-rank bound by counting socket bytes, and times it like nccl-tests.",
      "ring-allreduce"};
  Options o;
  app.add_option("--world", o.world, "Number of worker processes (ranks)")->capture_default_str();
  app.add_option("--size", o.size, "Elements per rank for the byte-count run and --iters timing")->capture_default_str();
  app.add_option("--dtype", o.dtype, "Element type on the wire: f64 or f32 (little-endian IEEE-754)")
      ->check(CLI::IsMember({"f64", "f32"}))
      ->capture_default_str();
  app.add_option("--algo", o.algos, "Algorithms to time: ring, naive, tree (comma separated)")
      ->delimiter(',')
      ->capture_default_str();
  app.add_option("--iters", o.iters, "Timed all-reduces per size (0 = only count bytes)")->capture_default_str();
  app.add_option("--warmup", o.warmup, "Untimed all-reduces before timing")->capture_default_str();
  app.add_flag("--sweep", o.sweep, "Time every size from --sweep-min to --sweep-max bytes, doubling");
  app.add_option("--sweep-min", o.sweep_min, "Smallest message of --sweep, bytes")->capture_default_str();
  app.add_option("--sweep-max", o.sweep_max, "Largest message of --sweep, bytes")->capture_default_str();
  app.add_flag("--crossover", o.crossover, "Ring vs tree latency from 1 KB to 10 MB, and where they cross");
  app.add_flag("--world-sweep", o.world_sweep, "Measure bytes per rank at world 2, 4, 8, 16 (ring vs naive)");
  app.add_flag("--overlap", o.overlap, "All-reduce gradient buckets while simulated backward compute runs");
  app.add_option("--buckets", o.buckets, "--overlap: gradient buckets")->capture_default_str();
  app.add_option("--compute-ms", o.compute_ms, "--overlap: backward compute per bucket, ms")->capture_default_str();
  app.add_option("--kill-rank", o.kill_rank, "Failure demo: this rank exits mid-collective");
  app.add_option("--kill-step", o.kill_step, "... at the start of this ring step (0 .. 2(N-1)-1)");
  app.add_option("--timeout-ms", o.timeout_ms, "Watchdog: fail when no byte moves for this long (0 = wait forever)")
      ->capture_default_str();
  app.add_flag("--compare-mpi", o.compare_mpi, "Under mpirun: also time MPI_Allreduce on the same buffers");
  app.add_option("--listen-addr", o.listen_addr,
                 "Under mpirun: this rank's numeric IPv4 address for the ring's TCP connections")
      ->capture_default_str();
  app.add_option("--metrics-out", o.metrics_out,
                 "Write the byte-count run's per-rank all-reduce metrics (operations, timeouts, seconds, "
                 "bytes) as Prometheus text to FILE, atomically (for gpu-exporter --textfile-dir)");
  gpulab::add_json_flag(app, o.common);
  gpulab::add_quick_flag(app, o.common, "Smaller sweeps and fewer iterations (for tests)");

  // Under mpirun, MPI_Init must run before anything else touches argv.
  std::unique_ptr<ring::MpiSession> mpi;
  if (ring::launched_by_mpirun() && ring::mpi_built()) mpi = std::make_unique<ring::MpiSession>(argc, argv);

  return gpulab::run_program("ring-allreduce", app, argc, argv, [&] {
    if (ring::launched_by_mpirun() && !ring::mpi_built())
      throw gpulab::Unsupported("started by mpirun, but this ring-allreduce was built without MPI (install libopenmpi-dev)");
    if (mpi) {
      o.mpi = mpi.get();
      o.world = mpi->world();  // MPI decides the world; --world is ignored
      if (o.world < 2) throw gpulab::UsageError("under mpirun the ring needs at least 2 ranks (mpirun -np 2 or more)");
      if (o.kill_rank >= 0 || o.world_sweep)
        throw gpulab::UsageError("--kill-rank and --world-sweep fork their own ranks; run them without mpirun");
    }
    if (o.compare_mpi && !mpi)
      throw gpulab::UsageError("--compare-mpi times MPI_Allreduce, so it needs a run under mpirun");
    validate(o);
    std::vector<Algo> algos;
    if (o.compare_mpi) o.algos.push_back("mpi");
    for (const auto& a : o.algos) {
      try {
        algos.push_back(ring::parse_algo(a));
      } catch (const std::invalid_argument& e) {
        throw gpulab::UsageError(fmt::format("--algo: {}", e.what()));
      }
      if (algos.back() == Algo::kMpi && !mpi)
        throw gpulab::UsageError("--algo mpi times MPI_Allreduce, so it needs a run under mpirun");
    }
    const DType dtype = o.dtype == "f64" ? DType::kF64 : DType::kF32;
    Json doc;
    int rc = run_headline(o, dtype, doc);
    if (rc == gpulab::kExitOk && (o.iters > 0 || o.sweep) && !o.crossover) {
      const int iters = o.iters > 0 ? o.iters : (o.common.quick ? 3 : 20);
      const auto sizes = o.sweep ? ring::doubling_sizes(o.sweep_min, o.sweep_max)
                                 : std::vector<std::size_t>{o.size * ring::dtype_size(dtype)};
      if (o.print()) fmt::print("\n");
      rc = all_right(run_timing(o, dtype, sizes, algos, iters, doc)) ? gpulab::kExitOk : gpulab::kExitCheckFailed;
    }
    if (rc == gpulab::kExitOk && o.crossover) {
      if (o.print()) fmt::print("\n");
      rc = run_crossover(o, dtype, doc);
    }
    if (rc == gpulab::kExitOk && o.overlap) rc = run_overlap(o, dtype, doc);
    if (rc == gpulab::kExitOk && o.world_sweep) rc = run_world_sweep(o, dtype, doc);
    if (o.common.json && o.root()) gpulab::print_json(doc);
    return rc;
  });
}
