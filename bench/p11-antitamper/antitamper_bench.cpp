// What each anti-tamper layer costs at run time: the price of the protection
// a product pays on every check.
#include <benchmark/benchmark.h>

#include <string>

#include "antitamper/debugger.h"
#include "antitamper/hooks.h"
#include "antitamper/integrity.h"
#include "antitamper/key_check.h"

namespace {

std::string valid_key() {
  char buf[32];
  at_make_key("GPULAB-", "1234", "ABCD", buf, sizeof buf);
  return buf;
}

void BM_KeyCheckPlain(benchmark::State& state) {
  const std::string key = valid_key();
  for (auto _ : state) benchmark::DoNotOptimize(at_key_check_plain(key.c_str(), "GPULAB-"));
}
BENCHMARK(BM_KeyCheckPlain);

void BM_KeyCheckFlattened(benchmark::State& state) {
  const std::string key = valid_key();
  for (auto _ : state) benchmark::DoNotOptimize(at_key_check_flat(key.c_str(), "GPULAB-"));
}
BENCHMARK(BM_KeyCheckFlattened);

// SHA-256 over the protected section as linked into this benchmark.
void BM_CodeIntegrityHash(benchmark::State& state) {
  std::size_t bytes = 0;
  for (auto _ : state) {
    const at_integrity_result r = at_verify_code_integrity();
    bytes = r.size;
    benchmark::DoNotOptimize(r);
  }
  state.counters["protected_bytes"] = static_cast<double>(bytes);
}
BENCHMARK(BM_CodeIntegrityHash);

void BM_TracerPid(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(at_tracer_pid("/proc/self/status"));
}
BENCHMARK(BM_TracerPid)->Unit(benchmark::kMicrosecond);

// fork + PTRACE_ATTACH + waitpid + detach: the expensive layer.
void BM_PtraceProbe(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(at_ptrace_probe());
}
BENCHMARK(BM_PtraceProbe)->Unit(benchmark::kMicrosecond);

void BM_HookCheck(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(at_check_hooks("/"));
}
BENCHMARK(BM_HookCheck)->Unit(benchmark::kMicrosecond);

}  // namespace
