// The ring's own code path without process start-up: two ranks as two threads
// of this process, connected over 127.0.0.1 TCP and then (second argument 1)
// sharing memory, all-reduce a vector. Reports bytes/s of the vector (algbw);
// busbw = algbw for N = 2.
#include <benchmark/benchmark.h>

#include <thread>
#include <vector>

#include "ring_allreduce/chunks.hpp"
#include "ring_allreduce/collectives.hpp"

namespace {

void BM_RingAllreduceTwoThreads(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  const bool shm = state.range(1) == 1;
  const auto deadline = ring::Clock::now() + std::chrono::seconds(10);
  ring::Listener l = ring::listen_tcp("127.0.0.1", 1);
  std::vector<ring::Fd> p0(2), p1(2);
  p1[0] = ring::connect_tcp(l.address, l.port, deadline);
  p0[1] = ring::accept_tcp(l.fd, deadline);
  ring::Transport t0(0, 2, std::move(p0), std::chrono::milliseconds(10'000));
  ring::Transport t1(1, 2, std::move(p1), std::chrono::milliseconds(10'000));
  if (shm) {
    // Both halves of the rendezvous at once, as two ranks would run them.
    ring::TransportOptions opts;
    opts.kind = ring::TransportKind::kShm;
    std::thread peer([&] { t1.setup_paths(opts, deadline); });
    t0.setup_paths(opts, deadline);
    peer.join();
  }
  std::vector<double> a(n, 1.0), b(n, 2.0);
  for (auto _ : state) {
    std::thread peer([&] { ring::ring_allreduce<double>(t1, b); });
    ring::ring_allreduce<double>(t0, a);
    peer.join();
    benchmark::DoNotOptimize(a.data());
  }
  if (t0.paths_name() != (shm ? "shm" : "tcp")) state.SkipWithError("the transport is not the one asked for");
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * n * sizeof(double)));
}
BENCHMARK(BM_RingAllreduceTwoThreads)
    ->ArgsProduct({benchmark::CreateRange(1 << 10, 1 << 22, 16), {0, 1}})
    ->ArgNames({"n", "shm"})
    ->UseRealTime();

// The schedule arithmetic the ring evaluates every step.
void BM_ChunkSchedule(benchmark::State& state) {
  const int world = static_cast<int>(state.range(0));
  std::size_t sink = 0;
  for (auto _ : state) {
    for (int r = 0; r < world; ++r)
      for (int s = 0; s < world - 1; ++s)
        sink += ring::chunk_bounds(1'000'003, world, ring::rs_send_chunk(r, s, world)).size();
    benchmark::DoNotOptimize(sink);
  }
}
BENCHMARK(BM_ChunkSchedule)->Arg(8)->Arg(64);

}  // namespace
