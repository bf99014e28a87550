// Simulator throughput: warp instructions simulated per second.
//   build/default/bin/bench-simt
// BM_MaxDivergent and BM_UniformLoop run the copy of the issue loop this CPU
// picks; the .../isa:N rows pin one copy each (1 x86-64, 2 x86-64-v3,
// 3 x86-64-v4) and are skipped on a CPU that lacks it.
#include <benchmark/benchmark.h>

#include <string>

#include "simt/assembler.hpp"
#include "simt/kernels.hpp"
#include "simt/machine.hpp"
#include "simt/vector_isa.hpp"

namespace {

void run_program(benchmark::State& state, const simt::Program& program, simt::VectorIsa isa) {
  if (!simt::vector_isa_supported(isa)) {
    state.SkipWithError(("SKIPPED: this CPU cannot run " + std::string(simt::vector_isa_name(isa))).c_str());
    return;
  }
  simt::Config config;
  config.isa = isa;
  std::uint64_t issues = 0;
  for (auto _ : state) {
    const auto r = simt::run(program, config);
    issues += r.stats.issues;
    benchmark::DoNotOptimize(r.mem.data());
  }
  state.counters["warp_instr/s"] = benchmark::Counter(static_cast<double>(issues), benchmark::Counter::kIsRate);
  state.SetLabel(std::string(simt::vector_isa_name(isa == simt::VectorIsa::kAuto ? simt::best_vector_isa() : isa)));
}

simt::VectorIsa isa_arg(const benchmark::State& state) { return static_cast<simt::VectorIsa>(state.range(0)); }

void BM_MaxDivergent(benchmark::State& state) { run_program(state, simt::load_builtin("max_divergent"), simt::VectorIsa::kAuto); }
BENCHMARK(BM_MaxDivergent);

void BM_MaxDivergentIsa(benchmark::State& state) { run_program(state, simt::load_builtin("max_divergent"), isa_arg(state)); }
BENCHMARK(BM_MaxDivergentIsa)->ArgName("isa")->DenseRange(1, 3);

// A long warp-uniform loop: 100,000 iterations of 4 ALU ops + loop control.
// (No MOD in the loop: 32 hardware divisions per issue would measure the divider.)
simt::Program uniform_loop() {
  return simt::assemble(
      "TID r0\nLI r7, 0\n"
      "L: ADD r1, r0, r7\nMUL r2, r1, 3\nSUB r3, r2, r0\nADD r4, r3, r1\n"
      "ADD r7, r7, 1\nSLT r8, r7, 100000\nBRZ r8, D, D\nJMP L\nD: RECONV\nST r0, r4\n",
      "uniform_loop");
}

void BM_UniformLoop(benchmark::State& state) { run_program(state, uniform_loop(), simt::VectorIsa::kAuto); }
BENCHMARK(BM_UniformLoop)->Unit(benchmark::kMillisecond);

void BM_UniformLoopIsa(benchmark::State& state) { run_program(state, uniform_loop(), isa_arg(state)); }
BENCHMARK(BM_UniformLoopIsa)->ArgName("isa")->DenseRange(1, 3)->Unit(benchmark::kMillisecond);

}  // namespace
