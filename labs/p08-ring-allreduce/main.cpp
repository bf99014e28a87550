// ring-allreduce: N real processes reduce a vector over shared memory (or TCP)
// with the ring algorithm NCCL uses, count every payload byte they write, and time
// it the way nccl-tests does. The tables come from src/*_report.cpp.
#include <fmt/format.h>

#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "gpulab/cli.hpp"
#include "gpulab/flag_checks.hpp"
#include "gpulab/json.hpp"
#include "gpulab/metrics_out.hpp"
#include "ring_allreduce/commands.hpp"
#include "ring_allreduce/mpi_launch.hpp"

namespace {

using ring::Algo;
using ring::DType;

// The tables the flags ask for, in order; the first failure stops the rest.
int run_all(const ring::RunOptions& o) {
  ring::validate(o);
  const std::vector<Algo> algos = ring::chosen_algos(o);
  const DType dtype = o.dtype == "f64" ? DType::kF64 : DType::kF32;
  gpulab::Json doc;
  gpulab::prom::Exposition metrics;
  int rc = ring::run_headline(o, dtype, doc, metrics);
  if (rc == gpulab::kExitOk && (o.iters > 0 || o.sweep) && !o.crossover) {
    const int iters = o.iters > 0 ? o.iters : (o.common.quick ? 3 : 20);
    const auto sizes = o.sweep ? ring::doubling_sizes(o.sweep_min, o.sweep_max)
                               : std::vector<std::size_t>{o.size * ring::dtype_size(dtype)};
    if (o.print()) fmt::print("\n");
    rc = ring::all_right(ring::run_timing(o, dtype, sizes, algos, iters, doc)) ? gpulab::kExitOk
                                                                               : gpulab::kExitCheckFailed;
  }
  if (rc == gpulab::kExitOk && o.crossover) {
    if (o.print()) fmt::print("\n");
    rc = ring::run_crossover(o, dtype, doc);
  }
  if (rc == gpulab::kExitOk && o.overlap) rc = ring::run_overlap(o, dtype, doc);
  if (rc == gpulab::kExitOk && o.world_sweep) rc = ring::run_world_sweep(o, dtype, doc);
  if (rc == gpulab::kExitOk && o.straggler()) rc = ring::run_straggler(o, dtype, doc, metrics);
  if (!o.metrics_out.empty() && o.root()) gpulab::write_metrics_out(o.metrics_out, metrics);
  if (o.common.json && o.root()) gpulab::print_json(doc);
  return rc;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "Ring all-reduce between real processes, over shared memory on one host or TCP sockets.\n"
      "Proves the 2(N-1)/N*V bytes-per-rank bound by counting transport bytes, and times it like nccl-tests.",
      "ring-allreduce"};
  ring::RunOptions o;
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
  app.add_option("--rounds", o.rounds,
                 "Time every row this many times, the rows of a size interleaved, and report the median, 1..100")
      ->check(gpulab::whole_in<int>(1, 100))
      ->capture_default_str();
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
  app.add_option("--fatal-rank", o.fatal_rank,
                 "Fatal-error demo: this rank's device context is lost (an injected sticky error, like "
                 "cudaErrorIllegalAddress) and it exits with status 4")
      ->check(gpulab::whole_in<int>(0, 63));
  app.add_option("--fatal-step", o.fatal_step, "... at the start of this ring step of the first attempt")
      ->check(gpulab::whole_in<int>(0, 125));
  app.add_option("--max-restarts", o.max_restarts,
                 "Supervisor: restart every rank this many times after one exits with status 4, 0..10")
      ->check(gpulab::whole_in<int>(0, 10))
      ->capture_default_str();
  app.add_option("--timeout-ms", o.timeout_ms, "Watchdog: fail when no byte moves for this long (0 = wait forever)")
      ->capture_default_str();
  app.add_option("--steps", o.steps,
                 "Straggler check: time this many steps (compute, then ring all-reduce) on every rank, "
                 "0..10000 (0 = off; 20 when --slow-rank is given)")
      ->check(gpulab::whole_in<int>(0, 10'000))
      ->capture_default_str();
  app.add_option("--slow-rank", o.slow_rank, "Straggler check: slow this rank down (0 .. world-1)")
      ->check(gpulab::whole_in<int>(0, 63));
  auto* slow_factor = app.add_option("--slow-factor", o.slow_factor,
                                     "... its compute takes this many times what it measured, 2..100 (the "
                                     "detector names ranks at 2x the median or more)")
                          ->check(gpulab::finite_in(2.0, 100.0))
                          ->capture_default_str();
  app.add_option("--transport", o.transport,
                 "Data path between ranks: auto (shared memory between ranks on one host, TCP across hosts), "
                 "shm or tcp")
      ->check(CLI::IsMember({"auto", "shm", "tcp"}))
      ->capture_default_str();
  app.add_option("--shm-spin-us", o.spin_us,
                 "Shared memory: microseconds a waiting rank spins before it sleeps on its futex, -1..100000 "
                 "(-1 = 50 when every rank on the host has a core, else 0)")
      ->check(gpulab::whole_in<int>(-1, 100'000))
      ->capture_default_str();
  app.add_option("--shm-ring-bytes", o.shm_ring_bytes,
                 "Shared memory: bytes of each ring between two ranks, a power of two from 64 to 1073741824; the "
                 "ring all-reduce moves slices of half a ring")
      ->check(gpulab::whole_in<std::size_t>(ring::kShmMinRingBytes, std::size_t{1} << 30))
      ->capture_default_str();
  app.add_flag("--compare-mpi", o.compare_mpi,
               "Under mpirun: also time MPI_Allreduce on the same buffers, and our ring over shared memory and TCP");
  app.add_option("--listen-addr", o.listen_addr,
                 "Under mpirun: this rank's numeric IPv4 address for the ring's TCP connections")
      ->capture_default_str();
  app.add_option("--rank-netns", o.rank_netns,
                 "Ranks on separate hosts: rank r runs in network namespace r of this comma-separated list "
                 "(ip netns names; needs root)")
      ->delimiter(',');
  app.add_option("--iface", o.iface,
                 "With --rank-netns: the interface the ring's connections use, in NCCL_SOCKET_IFNAME's syntax "
                 "(prefixes, =exact, ^exclude; overrides that variable; default: NCCL's rule, printed)");
  gpulab::add_metrics_out_flag(app, o.metrics_out,
                               "the byte-count run's per-rank all-reduce metrics (operations, timeouts, seconds, bytes) "
                               "and, with the straggler check, each rank's step times and score");
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
      if (o.kill_rank >= 0 || o.world_sweep || o.supervised())
        throw gpulab::UsageError(
            "--kill-rank, --fatal-rank, --max-restarts and --world-sweep fork their own ranks; run them without mpirun");
    }
    o.slow_factor_set = slow_factor->count() > 0;
    if (const char* env = std::getenv("NCCL_SOCKET_IFNAME")) o.iface_env = env;
    if (mpi && !o.rank_netns.empty())
      throw gpulab::UsageError("--rank-netns forks its own ranks into namespaces; run it without mpirun");
    if (o.slow_rank >= 0 && o.steps == 0) o.steps = ring::kDefaultSteps;
    if (o.compare_mpi && !mpi)
      throw gpulab::UsageError("--compare-mpi times MPI_Allreduce, so it needs a run under mpirun");
    return run_all(o);
  });
}
