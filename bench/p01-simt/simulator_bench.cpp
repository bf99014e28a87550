// Simulator throughput: warp instructions simulated per second.
//   build/default/bin/bench-simt
#include <benchmark/benchmark.h>

#include "simt/assembler.hpp"
#include "simt/kernels.hpp"
#include "simt/machine.hpp"

namespace {

void run_program(benchmark::State& state, const simt::Program& program) {
  std::uint64_t issues = 0;
  for (auto _ : state) {
    const auto r = simt::run(program);
    issues += r.stats.issues;
    benchmark::DoNotOptimize(r.mem.data());
  }
  state.counters["warp_instr/s"] = benchmark::Counter(static_cast<double>(issues), benchmark::Counter::kIsRate);
}

void BM_MaxDivergent(benchmark::State& state) { run_program(state, simt::load_builtin("max_divergent")); }
BENCHMARK(BM_MaxDivergent);

// A long warp-uniform loop: 100,000 iterations of 4 ALU ops + loop control.
// (No MOD in the loop: 32 hardware divisions per issue would measure the divider.)
void BM_UniformLoop(benchmark::State& state) {
  const auto program = simt::assemble(
      "TID r0\nLI r7, 0\n"
      "L: ADD r1, r0, r7\nMUL r2, r1, 3\nSUB r3, r2, r0\nADD r4, r3, r1\n"
      "ADD r7, r7, 1\nSLT r8, r7, 100000\nBRZ r8, D, D\nJMP L\nD: RECONV\nST r0, r4\n",
      "uniform_loop");
  run_program(state, program);
}
BENCHMARK(BM_UniformLoop)->Unit(benchmark::kMillisecond);

}  // namespace
