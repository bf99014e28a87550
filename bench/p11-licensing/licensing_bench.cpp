// What a licence check costs: the numbers behind "check at every request" vs
// "check at start-up and every few minutes".
#include <benchmark/benchmark.h>

#include <algorithm>

#include "licensing/digest.hpp"
#include "licensing/host_probe.hpp"
#include "licensing/license_status.hpp"

using namespace licensing;

namespace {

PrivateKey bench_key() {
  const Digest d = sha256("bench vendor key");
  return PrivateKey::from_seed(Bytes(d.begin(), d.end()));
}

License bench_license() {
  License l;
  l.id = "00112233aabbccdd";
  l.product = "gpulab-serve";
  l.customer = "Bench Customer";
  l.features = {"batching", "kv-offload"};
  l.max_gpus = 8;
  l.issued = *parse_date("2026-01-01");
  l.not_before = l.issued;
  l.expires = *parse_date("2026-12-31");
  l.grace_days = 14;
  for (const char* kind : {"machine_id", "cpu_model", "cpu_flags", "nic_mac", "root_disk", "gpu_uuid", "dmi_uuid"}) {
    l.hw.push_back({kind, component_hash("gpulab-serve", kind, kind)});
  }
  std::sort(l.hw.begin(), l.hw.end());
  l.hw_max_changed = 2;
  return l;
}

void BM_Ed25519Sign(benchmark::State& state) {
  const PrivateKey k = bench_key();
  const std::string payload = canonical_payload([] {
    License l = bench_license();
    l.key_id = "0000000000000000";
    return l;
  }());
  for (auto _ : state) benchmark::DoNotOptimize(k.sign(payload));
}
BENCHMARK(BM_Ed25519Sign);

void BM_Ed25519Verify(benchmark::State& state) {
  const SignedLicense s = parse_license(sign_license(bench_license(), bench_key()));
  const PublicKey pk = bench_key().public_key();
  for (auto _ : state) benchmark::DoNotOptimize(pk.verify(s.payload, s.signature));
}
BENCHMARK(BM_Ed25519Verify);

void BM_ParseLicense(benchmark::State& state) {
  const std::string text = sign_license(bench_license(), bench_key());
  for (auto _ : state) benchmark::DoNotOptimize(parse_license(text));
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * text.size()));
}
BENCHMARK(BM_ParseLicense);

void BM_EvaluateLicense(benchmark::State& state) {
  const SignedLicense s = parse_license(sign_license(bench_license(), bench_key()));
  const PublicKey pk = bench_key().public_key();
  const Fingerprint here{"gpulab-serve", s.license.hw};
  const std::int64_t now = start_of(*parse_date("2026-06-01"));
  for (auto _ : state) benchmark::DoNotOptimize(evaluate(s, pk, here, now, std::nullopt));
}
BENCHMARK(BM_EvaluateLicense);

// Reading /etc, /proc and /sys of this machine (plus an NVML dlopen attempt).
void BM_ProbeHost(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(fingerprint_of("gpulab-serve", probe_host({})));
}
BENCHMARK(BM_ProbeHost)->Unit(benchmark::kMicrosecond);

}  // namespace
