// paged-kv: the PagedAttention memory manager as a runnable lab. With no
// subcommand it prints the curriculum's memory table and a checked
// copy-on-write trace; subcommands run the extensions. What each run computes
// and prints is in paged_kv/reports.hpp.
#include <fmt/core.h>

#include <string>
#include <vector>

#include "gpulab/cli.hpp"
#include "gpulab/emit_report.hpp"
#include "gpulab/json.hpp"
#include "gpulab/metrics_out.hpp"
#include "gpulab/plot.hpp"
#include "paged_kv/metrics_out.hpp"
#include "paged_kv/reports.hpp"

namespace {

using namespace paged_kv;

constexpr const char* kProgram = "paged-kv";


}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "paged-kv: the PagedAttention KV-cache manager (fixed-size blocks, refcounts, "
      "copy-on-write).\n"
      "No subcommand: the curriculum's memory table and a checked copy-on-write trace."};
  app.fallthrough();
  app.require_subcommand(0, 1);
  gpulab::CommonOptions common;
  gpulab::add_json_flag(app, common);
  gpulab::add_seed_flag(app, common);
  std::string metrics_out;
  auto* metrics_flag = gpulab::add_metrics_out_flag(
      app, metrics_out,
      "KV-cache metrics (the default run's block states, prefix-cache's hit ratio, evict's preemptions)");

  DemoOptions demo;
  // The default run's flags; a subcommand would otherwise accept them (fallthrough) and ignore
  // them.
  const std::vector<CLI::Option*> demo_flags = {
      app.add_option("--pool-blocks", demo.pool_blocks, "Physical blocks in the pool")
          ->capture_default_str(),
      app.add_option("--block-size", demo.block_size, "Tokens per block")->capture_default_str(),
      app.add_option("--max-len", demo.max_len, "Naive allocator: tokens reserved per sequence")
          ->capture_default_str(),
      app.add_option("--actual-len", demo.actual_len,
                     "Paged allocator: tokens each sequence really holds")
          ->capture_default_str(),
      app.add_option("--requests", demo.requests, "Prefix sharing: requests")
          ->capture_default_str(),
      app.add_option("--prefix-len", demo.prefix_len, "Prefix sharing: shared system-prompt tokens")
          ->capture_default_str(),
      app.add_option("--gen-len", demo.gen_len, "Prefix sharing: tokens each request generates")
          ->capture_default_str(),
      app.add_option("--cow-prefix", demo.cow_prefix,
                     "COW trace: shared prompt tokens (must end inside a block)")
          ->capture_default_str()};

  KvMathOptions kv;
  auto* kv_cmd = app.add_subcommand(
      "kv-math", "KV bytes per token and sequence, and how many sequences fit in HBM");
  kv_cmd->add_option("--model", kv.model,
                     "Preset: llama-3-8b (default), llama-3-70b, llama-2-7b, llama-2-13b, "
                     "llama-2-70b, mistral-7b");
  kv_cmd->add_option("--layers", kv.layers, "Transformer layers (overrides the preset)");
  kv_cmd->add_option("--kv-heads", kv.kv_heads, "KV heads after GQA (overrides the preset)");
  kv_cmd->add_option("--head-dim", kv.head_dim, "Head dimension (overrides the preset)");
  kv_cmd->add_option("--dtype", kv.dtype, "KV element type (overrides the preset)")
      ->check(CLI::IsMember({"fp32", "fp16", "bf16", "fp8", "int8"}));
  kv_cmd->add_option("--context", kv.context, "Tokens per sequence")->capture_default_str();
  kv_cmd->add_option("--block-size", kv.block_size, "Tokens per KV block")->capture_default_str();
  kv_cmd->add_option("--hbm-gb", kv.hbm_gb, "GPU memory in GB (1e9 bytes)")->capture_default_str();
  kv_cmd->add_option("--weights-gb", kv.weights_gb,
                     "Model weights in GB (default: the preset's; 0 for a custom shape)");
  kv_cmd
      ->add_option("--reserve-gb", kv.reserve_gb, "GB kept back for activations and fragmentation")
      ->capture_default_str();

  PrefixOptions px;
  auto* px_cmd = app.add_subcommand(
      "prefix-cache",
      "Automatic prefix cache (chained block hashes, LRU eviction): hit rate vs pool size");
  px_cmd->add_option("--requests", px.w.requests, "Requests")->capture_default_str();
  px_cmd
      ->add_option("--system-prompts", px.w.system_prompts,
                   "Distinct system prompts (Zipf popularity)")
      ->capture_default_str();
  px_cmd->add_option("--system-len", px.w.system_len, "Tokens per system prompt")
      ->capture_default_str();
  px_cmd->add_option("--user-min", px.w.user_min, "Shortest user turn (tokens)")
      ->capture_default_str();
  px_cmd->add_option("--user-max", px.w.user_max, "Longest user turn (tokens)")
      ->capture_default_str();
  px_cmd->add_option("--generated", px.w.generated, "Tokens each request generates")
      ->capture_default_str();
  px_cmd->add_option("--concurrency", px.w.concurrency, "Requests holding KV at once")
      ->capture_default_str();
  px_cmd->add_option("--pools", px.pools, "Pool sizes to run (blocks)")
      ->capture_default_str()
      ->delimiter(',');
  px_cmd->add_option("--block-size", px.block_size, "Tokens per block")->capture_default_str();

  EvictOptions ev;
  auto* ev_cmd = app.add_subcommand(
      "evict", "Pool too small: preempt the LRU sequence, recover by recompute or by swap");
  ev_cmd->add_option("--sequences", ev.spec.sequences, "Sequences to run to completion")
      ->capture_default_str();
  ev_cmd->add_option("--prompt", ev.spec.prompt, "Prompt tokens per sequence")
      ->capture_default_str();
  ev_cmd->add_option("--generate", ev.spec.generate, "Tokens each sequence generates")
      ->capture_default_str();
  ev_cmd->add_option("--pool-blocks", ev.spec.pool_blocks, "GPU pool (blocks)")
      ->capture_default_str();
  ev_cmd->add_option("--host-blocks", ev.spec.host_blocks, "Host swap pool (blocks)")
      ->capture_default_str();
  ev_cmd->add_option("--block-size", ev.spec.block_size, "Tokens per block")->capture_default_str();
  ev_cmd
      ->add_option("--prefill-ms-per-token", ev.cost.prefill_ms_per_token,
                   "Recompute cost per token (ms)")
      ->capture_default_str();
  ev_cmd->add_option("--pcie-gbs", ev.cost.pcie_gb_per_s, "Host link bandwidth each way (GB/s)")
      ->capture_default_str();
  ev_cmd->add_option("--model", ev.model, "Model whose KV bytes/token size a block")
      ->capture_default_str();

  BeamSpec beam;
  beam.fork_every = 16;
  auto* beam_cmd = app.add_subcommand(
      "beam",
      "Parallel sampling and beam search: forks share blocks, COW only where beams diverge");
  beam_cmd->add_option("--width", beam.width, "Beams")->capture_default_str();
  beam_cmd->add_option("--prompt", beam.prompt, "Prompt tokens")->capture_default_str();
  beam_cmd->add_option("--steps", beam.steps, "Tokens each beam generates")->capture_default_str();
  beam_cmd
      ->add_option("--fork-every", beam.fork_every,
                   "Beam search: prune the worse half and fork every N tokens (0: off)")
      ->capture_default_str();
  beam_cmd->add_option("--block-size", beam.block_size, "Tokens per block")->capture_default_str();

  SweepOptions sw;
  std::string plot;
  auto* sw_cmd = app.add_subcommand("block-sweep",
                                    "Block size vs internal fragmentation and block-table length");
  sw_cmd->add_option("--sizes", sw.sizes, "Block sizes (tokens)")
      ->delimiter(',')
      ->capture_default_str();
  sw_cmd->add_option("--sequences", sw.sequences, "Sampled sequences")->capture_default_str();
  sw_cmd->add_option("--pool-tokens", sw.pool_tokens, "KV budget for the capacity column (tokens)")
      ->capture_default_str();
  sw_cmd->add_option("--plot", plot, "Write the trade-off to this SVG (gnuplot)");
  gpulab::add_quick_flag(app, common, "block-sweep: 500 sequences instead of --sequences");

  return gpulab::run_program(kProgram, app, argc, argv, [&] {
    if (!app.get_subcommands().empty())
      for (const auto* flag : demo_flags)
        if (flag->count() > 0)
          throw gpulab::UsageError(
              fmt::format("{} belongs to the default run, not to the '{}' subcommand",
                          flag->get_name(), app.get_subcommands().front()->get_name()));
    if (metrics_flag->count() > 0 && (kv_cmd->parsed() || beam_cmd->parsed() || sw_cmd->parsed()))
      throw gpulab::UsageError(fmt::format(
          "--metrics-out: '{}' has no KV-cache state to export (use it with the default run, "
          "prefix-cache or evict)",
          app.get_subcommands().front()->get_name()));
    const bool metrics = !metrics_out.empty();
    if (kv_cmd->parsed()) return gpulab::emit_report(run_kv_math(kv), common.json);
    if (beam_cmd->parsed()) return gpulab::emit_report(run_beam(beam, common.seed), common.json);
    if (px_cmd->parsed()) {
      const auto r = run_prefix_cache(px, common.seed);
      if (metrics) write_metrics_file(metrics_out, prefix_cache_metrics(r.runs));
      return gpulab::emit_report(r, common.json);
    }
    if (ev_cmd->parsed()) {
      const auto r = run_evict(ev);
      if (metrics) write_metrics_file(metrics_out, eviction_metrics(r.runs));
      return gpulab::emit_report(r, common.json);
    }
    if (sw_cmd->parsed()) {
      const auto r = run_sweep(sw, common.seed, common.quick);
      if (!plot.empty()) gpulab::write_svg_plot(sweep_plot(r), plot);
      return gpulab::emit_report(r, common.json);
    }
    const auto r = run_demo(demo);
    if (metrics) write_metrics_file(metrics_out, sharing_metrics(r.share, demo.pool_blocks));
    return gpulab::emit_report(r, common.json);
  });
}
