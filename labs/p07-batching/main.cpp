// batching-sim: an LLM server under Poisson load, iteration by iteration.
// With no subcommand it prints the curriculum's two tables (static vs
// continuous batching; goodput against batch depth); subcommands run the
// extensions. What each run computes and prints is in batching/scenarios.hpp.
#include <fmt/core.h>

#include <cstdint>
#include <stdexcept>
#include <string>

#include "batching/scenarios.hpp"
#include "gpulab/cli.hpp"
#include "gpulab/emit_report.hpp"
#include "gpulab/flag_checks.hpp"
#include "gpulab/json.hpp"
#include "gpulab/metrics_out.hpp"
#include "gpulab/plot.hpp"

namespace {

using namespace batching;

constexpr const char* kProgram = "batching-sim";

// One subcommand's flags: its own --json and --seed, the shared workload flags.
struct Shared {
  gpulab::CommonOptions common;
  ServerSetup setup;
  std::string metrics_out;  // --metrics-out FILE: every policy's serving metrics
};

// Writes --metrics-out, then the report as text or JSON.
template <class Report>
int emit(const Shared& s, const Report& r) {
  if (!s.metrics_out.empty()) r.serving.write(s.metrics_out);
  return gpulab::emit_report(r, s.common.json);
}

void add_workload_flags(CLI::App& app, Shared& s) {
  app.add_option("--rate", s.setup.workload.rate_per_s, "Poisson arrival rate (requests/s)")
      ->check(gpulab::finite_in(0, 1e9))
      ->capture_default_str();
  app.add_option("--requests", s.setup.workload.requests, "Requests to simulate")
      ->capture_default_str();
  app.add_option("--prompt-min", s.setup.workload.prompt_min, "Shortest prompt (tokens)")
      ->capture_default_str();
  app.add_option("--prompt-max", s.setup.workload.prompt_max, "Longest prompt (tokens)")
      ->capture_default_str();
  app.add_option("--output-min", s.setup.workload.output_min, "Shortest output (tokens)")
      ->capture_default_str();
  app.add_option("--output-max", s.setup.workload.output_max, "Longest output (tokens)")
      ->capture_default_str();
  app.add_option("--max-batch", s.setup.max_batch,
                 "Batch width (configured; sets the iteration time)")
      ->capture_default_str();
  app.add_option("--slo-ttft-ms", s.setup.slo.ttft_ms, "TTFT SLO: met when TTFT < this")
      ->capture_default_str();
  app.add_option("--slo-tpot-ms", s.setup.slo.tpot_ms, "TPOT SLO: met when TPOT < this")
      ->capture_default_str();
  app.add_option("--iter-base-ms", s.setup.cost.iter_base_ms, "Iteration time at width 0 (ms)")
      ->capture_default_str();
  app.add_option("--iter-per-slot-ms", s.setup.cost.iter_per_slot_ms,
                 "Iteration time per configured slot (ms)")
      ->capture_default_str();
  app.add_option("--prefill-ms-per-token", s.setup.cost.prefill_ms_per_token,
                 "Prefill cost per prompt token (ms)")
      ->capture_default_str();
  gpulab::add_metrics_out_flag(app, s.metrics_out, "each policy's TTFT/TPOT histograms and good/all request counts");
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "batching-sim: an LLM server under Poisson load, one iteration at a time.\n"
      "No subcommand: static vs continuous batching, and goodput against batch depth."};
  app.require_subcommand(0, 1);
  Shared s;
  gpulab::add_json_flag(app, s.common);
  gpulab::add_seed_flag(app, s.common);
  add_workload_flags(app, s);
  MainOptions mo;
  std::string plot;
  app.add_option("--trace", mo.trace,
                 "Replay a CSV trace (Azure TIMESTAMP,ContextTokens,GeneratedTokens or "
                 "arrival_ms,prompt_tokens,output_tokens) instead of the synthetic load");
  app.add_option("--depths", mo.depths, "Batch depths of the goodput sweep")
      ->delimiter(',')
      ->capture_default_str();
  app.add_option(
         "--kv-blocks", mo.kv_blocks,
         "Page the continuous runs' KV as P12's serving engine does, in a pool of this many "
         "blocks (blocks on demand, preemption by recompute; 0: unlimited)")
      ->check(gpulab::whole_in<std::size_t>(0, std::size_t{1} << 28))
      ->capture_default_str();
  app.add_option("--block-size", mo.block_size, "Tokens per KV block (with --kv-blocks)")
      ->check(gpulab::whole_in<std::size_t>(1, 4096))
      ->capture_default_str();
  app.add_flag("--prefix-cache", mo.prefix_cache,
               "With --kv-blocks: reuse computed full blocks of earlier identical prefixes");
  app.add_option("--shared-fraction", s.setup.workload.shared_fraction,
                 "Fraction of requests with a system prompt")
      ->check(gpulab::finite_in(0, 1))
      ->capture_default_str();
  app.add_option("--system-prompts", s.setup.workload.system_prompts,
                 "Distinct system prompts (Zipf popularity)")
      ->check(gpulab::whole_in<std::uint32_t>(1, 1'000'000))
      ->capture_default_str();
  app.add_option("--system-tokens", s.setup.workload.system_tokens, "Tokens per system prompt")
      ->check(gpulab::whole_in<std::uint32_t>(1, 1'000'000))
      ->capture_default_str();
  app.add_option("--plot", plot,
                 "Write throughput and goodput against batch depth to this SVG (gnuplot)");

  // Subcommands start from the same defaults and take the same workload flags.
  Shared si = s, sp = s, sa = s;
  si.setup.workload.long_fraction = 0.2;
  si.setup.workload.rate_per_s = 2.0;  // below saturation, so stalls rather than queueing dominate
  sp.setup.workload.shared_fraction = 0.9;
  sp.setup.workload.prompt_min = 32;
  sp.setup.workload.prompt_max = 256;
  sa.setup.workload.rate_per_s = 6;
  sa.setup.max_batch = 32;

  InterferenceOptions io;
  auto* inter = app.add_subcommand("interference",
                                   "Long prompts stall decodes: whole-prompt vs chunked prefill vs "
                                   "prefill/decode disaggregation");
  gpulab::add_json_flag(*inter, si.common);
  gpulab::add_seed_flag(*inter, si.common);
  add_workload_flags(*inter, si);
  inter->add_option("--long-fraction", si.setup.workload.long_fraction, "Fraction of long prompts")
      ->capture_default_str();
  inter->add_option("--long-min", si.setup.workload.long_min, "Shortest long prompt (tokens)")
      ->capture_default_str();
  inter->add_option("--long-max", si.setup.workload.long_max, "Longest long prompt (tokens)")
      ->capture_default_str();
  inter->add_option("--chunk", io.chunk, "Prefill tokens per iteration when chunking")
      ->capture_default_str();
  inter
      ->add_option("--model", io.model,
                   "Model whose KV bytes/token set the hand-off size (paged-kv presets)")
      ->capture_default_str();
  inter->add_option("--nvlink-gbs", io.nvlink_gbs, "In-node link bandwidth (GB/s)")
      ->capture_default_str();
  inter->add_option("--ib-gbs", io.ib_gbs, "Cross-node link bandwidth (GB/s)")
      ->capture_default_str();

  PrefixOptions po;
  auto* prefix = app.add_subcommand("prefix-cache",
                                    "Requests sharing system prompts, with and without paged-kv's "
                                    "automatic prefix cache");
  gpulab::add_json_flag(*prefix, sp.common);
  gpulab::add_seed_flag(*prefix, sp.common);
  add_workload_flags(*prefix, sp);
  prefix
      ->add_option("--shared-fraction", sp.setup.workload.shared_fraction,
                   "Fraction of requests with a system prompt")
      ->capture_default_str();
  prefix
      ->add_option("--system-prompts", sp.setup.workload.system_prompts,
                   "Distinct system prompts (Zipf popularity)")
      ->capture_default_str();
  prefix->add_option("--system-tokens", sp.setup.workload.system_tokens, "Tokens per system prompt")
      ->capture_default_str();
  prefix->add_option("--pool-blocks", po.pool_blocks, "KV pool size (blocks)")
      ->capture_default_str();
  prefix->add_option("--block-size", po.block_size, "Tokens per KV block")->capture_default_str();

  auto* admit = app.add_subcommand(
      "admission", "Overload: admit everything vs SLO-aware admission (goodput protected)");
  gpulab::add_json_flag(*admit, sa.common);
  gpulab::add_seed_flag(*admit, sa.common);
  add_workload_flags(*admit, sa);
  double headroom = 0.8;
  admit
      ->add_option("--tpot-headroom", headroom,
                   "Widest batch whose iteration time is at most this share of the TPOT SLO")
      ->capture_default_str();

  return gpulab::run_program(kProgram, app, argc, argv, [&] {
    for (Shared* x : {&s, &si, &sp, &sa}) x->setup.seed = x->common.seed;
    try {
      if (inter->parsed()) return emit(si, run_interference(si.setup, io));
      if (prefix->parsed()) return emit(sp, run_prefix(sp.setup, po));
      if (admit->parsed()) return emit(sa, run_admission(sa.setup, headroom));
      const auto r = run_main(s.setup, mo);
      if (!plot.empty()) gpulab::write_svg_plot(goodput_plot(r), plot);
      return emit(s, r);
    } catch (const std::invalid_argument& e) {
      throw gpulab::UsageError(e.what());
    }
  });
}
