// What each batching-sim run computes and how it prints: the curriculum's two
// tables (the default run) and the three extensions, each a result struct
// built by run_*() and rendered as the README's text by render() or as one
// JSON document by to_json(). main.cpp only wires flags to these. Every run
// also records its policies' serving metrics, which main writes on
// --metrics-out. The run_*() functions throw gpulab::UsageError or
// std::invalid_argument (from validate() and the simulators) for values they
// refuse; both are bad input.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "batching/cost_model.hpp"
#include "batching/engine_kv.hpp"
#include "batching/kv_model.hpp"
#include "batching/metrics.hpp"
#include "batching/metrics_out.hpp"
#include "batching/workload.hpp"
#include "gpulab/json.hpp"
#include "gpulab/plot.hpp"

namespace batching {

// What every run shares: the load, the server's cost model, the SLOs and the batch width.
struct ServerSetup {
  WorkloadSpec workload;
  CostModel cost;
  Slo slo;
  std::size_t max_batch = 16;
  std::uint64_t seed = 1;
};
void validate(const ServerSetup& s);

// ---- the default run: static vs continuous, goodput against batch depth ----
struct MainOptions {
  std::string trace;  // replay this CSV instead of the synthetic load
  std::vector<std::size_t> depths{4, 8, 16, 32, 64};
  // > 0: the continuous runs hold KV as P12's serving engine does (EngineKv:
  // blocks on demand, preemption by recompute), in a pool of this many blocks.
  // 0: unlimited KV, no prefix reuse (the curriculum's model). Static batching
  // keeps unlimited KV either way.
  std::size_t kv_blocks = 0;
  std::size_t block_size = 16;
  bool prefix_cache = false;  // with kv_blocks: paged-kv's automatic prefix cache
};
struct MainReport {
  ServerSetup setup;
  MainOptions options;
  std::size_t requests = 0;
  Metrics stat, cont;
  EngineKvStats cont_kv;       // the continuous run's KV (options.kv_blocks > 0)
  std::vector<Metrics> sweep;  // one per options.depths
  std::size_t best = 0;        // index of the goodput-optimal depth
  double thru_gain = 0, ttft_gain = 0;
  ServingMetrics serving;
};
MainReport run_main(const ServerSetup& s, const MainOptions& o);
std::string render(const MainReport& r);
gpulab::Json to_json(const MainReport& r);
// The --plot picture: throughput and goodput against batch depth.
gpulab::PlotSpec goodput_plot(const MainReport& r);

// ---- interference: whole-prompt vs chunked prefill vs disaggregation ----
struct InterferenceOptions {
  std::size_t chunk = 2048;  // vLLM's default max_num_batched_tokens
  std::string model = "llama-3-8b";
  double nvlink_gbs = 900;
  double ib_gbs = 50;
};
struct InterferenceRow {
  std::string name;
  int gpus = 1;
  Metrics m;
  double handoff_p50_ms = 0;
};
struct InterferenceReport {
  ServerSetup setup;
  InterferenceOptions options;
  std::size_t requests = 0;
  std::uint64_t kv_per_token = 0;
  std::vector<InterferenceRow> rows;
  ServingMetrics serving;
};
InterferenceReport run_interference(const ServerSetup& s, const InterferenceOptions& o);
std::string render(const InterferenceReport& r);
gpulab::Json to_json(const InterferenceReport& r);

// ---- prefix-cache: paged KV with and without the automatic prefix cache ----
struct PrefixOptions {
  std::size_t pool_blocks = 8192;
  std::size_t block_size = 16;
};
struct PrefixRow {
  std::string name;
  Metrics m;
  PrefixKvStats kv;
  double hit_ttft_p50 = 0, miss_ttft_p50 = 0;
};
struct PrefixReport {
  ServerSetup setup;
  PrefixOptions options;
  std::size_t requests = 0;
  std::vector<PrefixRow> rows;
  ServingMetrics serving;
};
PrefixReport run_prefix(const ServerSetup& s, const PrefixOptions& o);
std::string render(const PrefixReport& r);
gpulab::Json to_json(const PrefixReport& r);

// ---- admission: admit everything vs SLO-aware admission under overload ----
struct AdmissionRow {
  std::string name;
  std::size_t width = 0;
  Metrics m;
};
struct AdmissionReport {
  ServerSetup setup;
  std::size_t requests = 0;
  std::vector<AdmissionRow> rows;
  ServingMetrics serving;
};
// headroom: the widest batch whose bare iteration is at most this share of the TPOT SLO.
AdmissionReport run_admission(const ServerSetup& s, double headroom);
std::string render(const AdmissionReport& r);
gpulab::Json to_json(const AdmissionReport& r);

}  // namespace batching
