#include <fmt/format.h>

#include <stdexcept>

#include "gpulab/errors.hpp"
#include "ring_allreduce/commands.hpp"

namespace ring {

void validate(const RunOptions& o) {
  if (o.world < 2 || o.world > 64) throw gpulab::UsageError(fmt::format("--world {} is out of range: use 2..64 ranks", o.world));
  if (o.size == 0) throw gpulab::UsageError("--size 0: the vector needs at least one element");
  if (o.size > (std::size_t{1} << 27))
    throw gpulab::UsageError(fmt::format("--size {} is too large for this demo (at most 134217728 elements)", o.size));
  if (o.iters < 0 || o.warmup < 0) throw gpulab::UsageError("--iters and --warmup must be >= 0");
  if (o.rounds < 1 || o.rounds > 100) throw gpulab::UsageError(fmt::format("--rounds {}: use 1..100", o.rounds));
  if (!valid_ring_bytes(o.shm_ring_bytes))
    throw gpulab::UsageError(fmt::format("--shm-ring-bytes {}: use a power of two from {} to 1073741824",
                                         o.shm_ring_bytes, kShmMinRingBytes));
  if (o.timeout_ms < 0) throw gpulab::UsageError("--timeout-ms must be >= 0 (0 = wait forever)");
  if ((o.kill_rank >= 0) != (o.kill_step >= 0))
    throw gpulab::UsageError("--kill-rank and --kill-step go together");
  if (o.kill_rank >= o.world)
    throw gpulab::UsageError(fmt::format("--kill-rank {} is not a rank of a world of {}", o.kill_rank, o.world));
  const int steps = step_count(Algo::kRing, o.world);
  if (o.kill_step >= steps)
    throw gpulab::UsageError(fmt::format("--kill-step {}: a ring all-reduce on {} ranks has steps 0..{}", o.kill_step,
                                         o.world, steps - 1));
  if ((o.fatal_rank >= 0) != (o.fatal_step >= 0))
    throw gpulab::UsageError("--fatal-rank and --fatal-step go together");
  if (o.fatal_rank >= o.world)
    throw gpulab::UsageError(fmt::format("--fatal-rank {} is not a rank of a world of {}", o.fatal_rank, o.world));
  if (o.fatal_step >= steps)
    throw gpulab::UsageError(fmt::format("--fatal-step {}: a ring all-reduce on {} ranks has steps 0..{}",
                                         o.fatal_step, o.world, steps - 1));
  if (o.fatal_rank >= 0 && o.timeout_ms == 0)
    throw gpulab::UsageError(
        "--fatal-rank needs --timeout-ms: the other ranks' watchdog is what ends their wait for the dead rank");
  if (o.fatal_rank >= 0 && o.kill_rank >= 0)
    throw gpulab::UsageError("--fatal-rank and --kill-rank are separate demos: run one at a time");
  if (o.max_restarts < 0 || o.max_restarts > 10)
    throw gpulab::UsageError(fmt::format("--max-restarts {}: use 0..10", o.max_restarts));
  if (o.slow_factor_set && o.slow_rank < 0)
    throw gpulab::UsageError("--slow-factor needs --slow-rank (the rank to slow down)");
  if (o.slow_rank >= o.world)
    throw gpulab::UsageError(fmt::format("--slow-rank {} is not a rank of a world of {}", o.slow_rank, o.world));
  if (o.straggler() && o.world < 3)
    throw gpulab::UsageError(fmt::format(
        "the straggler check needs at least 3 ranks (--world {}): with 2, each is as far from the median as the other",
        o.world));
  if (o.straggler() && o.fatal_rank >= 0)
    throw gpulab::UsageError("--fatal-rank and the straggler check (--steps, --slow-rank) are separate demos: run one at a time");
  if (o.straggler() && o.kill_rank >= 0)
    throw gpulab::UsageError("--kill-rank and the straggler check (--steps, --slow-rank) are separate demos: run one at a time");
  if (!o.rank_netns.empty()) {
    if (o.rank_netns.size() != static_cast<std::size_t>(o.world))
      throw gpulab::UsageError(fmt::format("--rank-netns names {} namespaces for a world of {}: one per rank",
                                           o.rank_netns.size(), o.world));
    for (const auto& ns : o.rank_netns)
      if (ns.empty()) throw gpulab::UsageError("--rank-netns: an empty namespace name");
    if (o.world_sweep) throw gpulab::UsageError("--world-sweep changes the world size; --rank-netns fixes it: run one");
  }
  if (!o.iface.empty() && o.rank_netns.empty())
    throw gpulab::UsageError(
        "--iface picks the interface between hosts: it needs --rank-netns (ranks on one host talk over loopback)");
  if (o.buckets < 1 || o.buckets > 4096) throw gpulab::UsageError("--buckets must be 1..4096");
  if (!(o.compute_ms >= 0) || o.compute_ms > 10'000) throw gpulab::UsageError("--compute-ms must be 0..10000");
  if (o.sweep_min == 0 || o.sweep_min > o.sweep_max || o.sweep_max > (std::size_t{1} << 30))
    throw gpulab::UsageError("--sweep-min/--sweep-max: need 0 < min <= max <= 1 GiB");
}

std::vector<Algo> chosen_algos(const RunOptions& o) {
  std::vector<std::string> names = o.algos;
  if (o.compare_mpi) names.emplace_back("mpi");
  std::vector<Algo> algos;
  for (const auto& a : names) {
    try {
      algos.push_back(parse_algo(a));
    } catch (const std::invalid_argument& e) {
      throw gpulab::UsageError(fmt::format("--algo: {}", e.what()));
    }
    if (algos.back() == Algo::kMpi && o.mpi == nullptr)
      throw gpulab::UsageError("--algo mpi times MPI_Allreduce, so it needs a run under mpirun");
  }
  return algos;
}

TransportOptions transport_options(const RunOptions& o) {
  TransportOptions t;
  try {
    t.kind = parse_transport_kind(o.transport);
  } catch (const std::invalid_argument& e) {
    throw gpulab::UsageError(fmt::format("--transport: {}", e.what()));
  }
  t.spin = std::chrono::microseconds(o.spin_us);
  t.ring_bytes = o.shm_ring_bytes;
  return t;
}

LaunchOptions launch_options(const RunOptions& o, int world) {
  LaunchOptions l;
  l.world = world;
  l.timeout = std::chrono::milliseconds(o.timeout_ms);
  l.transport = transport_options(o);
  l.rank_netns = o.rank_netns;
  if (!o.iface.empty()) {
    l.iface_spec = o.iface;
    l.iface_source = "--iface";
  } else if (!o.iface_env.empty()) {
    l.iface_spec = o.iface_env;
    l.iface_source = "NCCL_SOCKET_IFNAME";
  }
  return l;
}

std::vector<RankOutcome> launch(const RunOptions& o, int world, const RankJob& job) {
  if (o.mpi != nullptr)
    return launch_mpi(*o.mpi, o.listen_addr, std::chrono::milliseconds(o.timeout_ms), transport_options(o), job);
  return launch_local(launch_options(o, world), job);
}

}  // namespace ring
