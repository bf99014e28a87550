// paged-kv: the PagedAttention memory manager as a runnable lab. With no
// subcommand it prints the curriculum's memory table and a checked
// copy-on-write trace; subcommands run the extensions.
#include <fmt/core.h>

#include <string>
#include <vector>

#include "gpulab/cli.hpp"
#include "gpulab/json.hpp"
#include "gpulab/plot.hpp"
#include "gpulab/table.hpp"
#include "paged_kv/beam_search.hpp"
#include "paged_kv/block_size_sweep.hpp"
#include "paged_kv/eviction.hpp"
#include "paged_kv/format.hpp"
#include "paged_kv/kv_math.hpp"
#include "paged_kv/memory_regimes.hpp"
#include "paged_kv/metrics_out.hpp"
#include "paged_kv/prefix_workload.hpp"

namespace {

using gpulab::Json;
using gpulab::Table;
using namespace paged_kv;

constexpr const char* kProgram = "paged-kv";

struct DemoOptions {
  std::size_t pool_blocks = 4096;
  std::size_t block_size = 16;
  std::size_t max_len = 2048;
  std::size_t actual_len = 768;
  std::size_t requests = 50;
  std::size_t prefix_len = 1024;
  std::size_t gen_len = 40;
  std::size_t cow_prefix = 20;
};

std::string table_str(const std::vector<int>& t) {
  if (t.empty()) return "-";
  std::string s = "[";
  for (std::size_t i = 0; i < t.size(); ++i) s += (i ? " " : "") + std::to_string(t[i]);
  return s + "]";
}

int run_demo(const DemoOptions& o, const gpulab::CommonOptions& common,
             const std::string& metrics_out) {
  if (o.block_size == 0) throw gpulab::UsageError("--block-size must be at least 1 token");
  if (o.pool_blocks == 0) throw gpulab::UsageError("--pool-blocks must be at least 1");
  if (o.max_len == 0 || o.actual_len == 0 || o.requests == 0 || o.prefix_len == 0)
    throw gpulab::UsageError(
        "--max-len, --actual-len, --requests and --prefix-len must be at least 1");
  if (o.actual_len > o.max_len) throw gpulab::UsageError("--actual-len cannot exceed --max-len");
  if (o.cow_prefix % o.block_size == 0)
    throw gpulab::UsageError(
        "--cow-prefix must end inside a block (not a multiple of --block-size)");

  const std::size_t naive = fit_contiguous(o.pool_blocks, o.block_size, o.max_len);
  const std::size_t paged = fit_paged(o.pool_blocks, o.block_size, o.actual_len);
  const SharingResult share =
      prefix_sharing(o.pool_blocks, o.block_size, o.requests, o.prefix_len, o.gen_len);
  const CowTrace cow = cow_divergence(o.block_size, o.cow_prefix);
  const double paged_gain = naive ? static_cast<double>(paged) / static_cast<double>(naive) : 0;
  const double share_gain = share.blocks_with_sharing
                                ? static_cast<double>(share.blocks_without_sharing) /
                                      static_cast<double>(share.blocks_with_sharing)
                                : 0;
  const bool pools_ok = share.fit_without_sharing && share.fit_with_sharing;
  if (!metrics_out.empty()) write_metrics_file(metrics_out, sharing_metrics(share, o.pool_blocks));

  if (common.json) {
    Json steps = Json::array();
    for (const auto& s : cow.steps) {
      Json rc = Json::object();
      for (const auto& [b, n] : s.refcounts) rc[std::to_string(b)] = n;
      steps.push_back({{"step", s.what},
                       {"table_a", s.table_a},
                       {"table_b", s.table_b},
                       {"refcounts", rc},
                       {"physical_blocks", s.physical}});
    }
    Json checks = Json::array();
    for (const auto& c : cow.checks) checks.push_back({{"check", c.what}, {"pass", c.pass}});
    gpulab::print_json(
        {{"pool_blocks", o.pool_blocks},
         {"block_size", o.block_size},
         {"naive_contiguous_sequences", naive},
         {"paged_sequences", paged},
         {"paged_gain", paged_gain},
         {"prefix_sharing",
          {{"requests", o.requests},
           {"prefix_tokens", o.prefix_len},
           {"generated_tokens", o.gen_len},
           {"blocks_without_sharing", share.blocks_without_sharing},
           {"blocks_with_sharing", share.blocks_with_sharing},
           {"fit", pools_ok},
           {"reduction", share_gain}}},
         {"copy_on_write", {{"steps", steps}, {"checks", checks}, {"pass", cow.all_pass()}}}});
    return cow.all_pass() ? gpulab::kExitOk : gpulab::kExitCheckFailed;
  }

  fmt::print("== memory efficiency: sequences that fit in a {}-block pool ==\n", o.pool_blocks);
  fmt::print("naive contiguous (reserve max_len={})  : {:4} sequences\n", o.max_len, naive);
  fmt::print("paged (allocate-on-demand, actual={})    : {:4} sequences   ({})\n", o.actual_len,
             paged, naive ? fmt::format("{:.1f}x", paged_gain) : "naive fits none");
  fmt::print("\n== prefix sharing: {} requests, shared {}-token system prompt ==\n", o.requests,
             o.prefix_len);
  // Pool exhaustion is an outcome to report: the count is then a floor.
  auto exhausted = [&](bool fit, std::size_t served) {
    return fit ? std::string()
               : fmt::format("   (pool exhausted: {} of {} requests fit)", served, o.requests);
  };
  fmt::print("without sharing : {:5} blocks used{}\n", share.blocks_without_sharing,
             exhausted(share.fit_without_sharing, share.served_without_sharing));
  const std::string ratio =
      !share.fit_with_sharing
          ? "ratio unknown: the pool is too small even with sharing"
          : fmt::format("{}{:.1f}x less; shared prefix stored once",
                        share.fit_without_sharing ? "" : "at least ", share_gain);
  fmt::print("with sharing    : {:5} blocks used   ({}){}\n", share.blocks_with_sharing, ratio,
             exhausted(share.fit_with_sharing, share.served_with_sharing));
  fmt::print("copy-on-write   : {}\n", cow.all_pass()
                                           ? "divergence forked block; refcounts correct"
                                           : "FAIL: refcounts or contents wrong (see the trace)");

  fmt::print("\n== copy-on-write trace: A and B share a {}-token prompt, {}-token blocks ==\n",
             cow.prefix_len, cow.block_size);
  Table t;
  t.column("step", Table::Align::kLeft)
      .column("A table", Table::Align::kLeft)
      .column("B table", Table::Align::kLeft)
      .column("refcounts (block:count)", Table::Align::kLeft)
      .column("physical blocks");
  for (const auto& s : cow.steps) {
    std::string rc;
    for (const auto& [b, n] : s.refcounts)
      rc += fmt::format("{}{}:{}", rc.empty() ? "" : " ", b, n);
    t.row({s.what, table_str(s.table_a), table_str(s.table_b), rc, std::to_string(s.physical)});
  }
  fmt::print("{}", t.render());
  for (const auto& c : cow.checks) fmt::print("{}  {}\n", c.pass ? "PASS" : "FAIL", c.what);
  return cow.all_pass() ? gpulab::kExitOk : gpulab::kExitCheckFailed;
}

struct KvMathOptions {
  std::string model;
  std::uint64_t layers = 0, kv_heads = 0, head_dim = 0;
  std::string dtype;
  std::uint64_t context = 8192;
  std::uint64_t block_size = 16;
  double hbm_gb = 40;
  double weights_gb = -1;  // -1: the preset's (or 0 for a custom shape)
  double reserve_gb = 0;
};

ModelShape resolve_model(const KvMathOptions& o) {
  const bool custom = o.layers || o.kv_heads || o.head_dim;
  ModelShape m;
  if (!o.model.empty()) {
    const auto found = find_model(o.model);
    if (!found) {
      std::string names;
      for (const auto& p : model_presets()) names += (names.empty() ? "" : ", ") + p.name;
      throw gpulab::UsageError(fmt::format("unknown model '{}' (known: {})", o.model, names));
    }
    m = *found;
  } else if (custom) {
    if (!o.layers || !o.kv_heads || !o.head_dim)
      throw gpulab::UsageError(
          "a custom shape needs --layers, --kv-heads and --head-dim (each >= 1), or --model");
    m.name = "custom";
    m.weights_gb = 0;
  } else {
    m = *find_model("llama-3-8b");
  }
  if (o.layers) m.layers = o.layers;
  if (o.kv_heads) m.kv_heads = o.kv_heads;
  if (o.head_dim) m.head_dim = o.head_dim;
  if (!o.dtype.empty()) m.dtype = *parse_dtype(o.dtype);
  if (o.weights_gb >= 0) m.weights_gb = o.weights_gb;
  return m;
}

int run_kv_math(const KvMathOptions& o, const gpulab::CommonOptions& common) {
  const ModelShape m = resolve_model(o);
  KvCapacity c;
  try {
    c = kv_capacity(m, o.context, o.block_size, o.hbm_gb, o.reserve_gb);
  } catch (const std::invalid_argument& e) {
    throw gpulab::UsageError(e.what());
  }
  if (common.json) {
    gpulab::print_json({{"model", m.name},
                        {"layers", m.layers},
                        {"kv_heads", m.kv_heads},
                        {"head_dim", m.head_dim},
                        {"dtype", dtype_name(m.dtype)},
                        {"context_tokens", o.context},
                        {"block_size", o.block_size},
                        {"kv_bytes_per_token", c.bytes_per_token},
                        {"kv_bytes_per_sequence", c.bytes_per_sequence},
                        {"kv_bytes_per_block", c.bytes_per_block},
                        {"hbm_gb", o.hbm_gb},
                        {"weights_gb", m.weights_gb},
                        {"reserve_gb", o.reserve_gb},
                        {"kv_budget_gb", c.kv_budget_gb},
                        {"sequences_fit", c.sequences_fit}});
    return gpulab::kExitOk;
  }
  fmt::print("== KV-cache math: {} ({} layers x {} KV heads x {} head dim, {}) ==\n", m.name,
             m.layers, m.kv_heads, m.head_dim, dtype_name(m.dtype));
  fmt::print("KV per token    : {} B ({}) = 2 x {} x {} x {} x {} B\n",
             with_commas(c.bytes_per_token), binary_bytes(c.bytes_per_token), m.layers, m.kv_heads,
             m.head_dim, dtype_bytes(m.dtype));
  fmt::print("KV per sequence : {} B ({}, {:.2f} GB) at {} tokens\n",
             with_commas(c.bytes_per_sequence), binary_bytes(c.bytes_per_sequence),
             static_cast<double>(c.bytes_per_sequence) / 1e9, with_commas(o.context));
  fmt::print("KV per block    : {} B ({}) at {} tokens per block\n", with_commas(c.bytes_per_block),
             binary_bytes(c.bytes_per_block), o.block_size);
  fmt::print(
      "KV budget       : {:.1f} GB HBM - {:.1f} GB weights - {:.1f} GB reserve = {:.1f} GB\n",
      o.hbm_gb, m.weights_gb, o.reserve_gb, c.kv_budget_gb);
  if (c.kv_budget_gb <= 0)
    fmt::print("sequences fit   : 0 (the weights alone do not fit: shard the model or add HBM)\n");
  else
    fmt::print("sequences fit   : {} concurrent sequences of {} tokens\n", c.sequences_fit,
               with_commas(o.context));
  return gpulab::kExitOk;
}

struct PrefixOptions {
  PrefixWorkload w;
  std::vector<std::size_t> pools{1536, 2048, 3072, 4096, 8192};
  std::size_t block_size = 16;
};

int run_prefix_cache(PrefixOptions o, const gpulab::CommonOptions& common,
                     const std::string& metrics_out) {
  o.w.seed = common.seed;
  if (o.block_size == 0) throw gpulab::UsageError("--block-size must be at least 1 token");
  std::vector<PrefixRun> runs;
  for (const std::size_t p : o.pools) {
    if (p == 0) throw gpulab::UsageError("--pools entries must be at least 1 block");
    try {
      runs.push_back(run_prefix_workload(o.w, p, o.block_size));
    } catch (const std::invalid_argument& e) {
      throw gpulab::UsageError(e.what());
    }
  }
  if (!metrics_out.empty()) write_metrics_file(metrics_out, prefix_cache_metrics(runs));
  if (common.json) {
    Json rows = Json::array();
    for (const auto& r : runs)
      rows.push_back({{"pool_blocks", r.pool_blocks},
                      {"block_lookups", r.block_lookups},
                      {"block_hits", r.block_hits},
                      {"hit_rate", r.hit_rate()},
                      {"prompt_tokens", r.prompt_tokens},
                      {"prefill_tokens", r.prefill_tokens},
                      {"prefill_saved", r.prefill_saved()},
                      {"evictions", r.evictions},
                      {"rejected", r.rejected}});
    gpulab::print_json({{"requests", o.w.requests},
                        {"system_prompts", o.w.system_prompts},
                        {"system_tokens", o.w.system_len},
                        {"concurrency", o.w.concurrency},
                        {"block_size", o.block_size},
                        {"seed", common.seed},
                        {"runs", rows}});
    return gpulab::kExitOk;
  }
  fmt::print(
      "== automatic prefix cache: {} requests, {} system prompts of {} tokens (Zipf), {} alive at "
      "once ==\n",
      o.w.requests, o.w.system_prompts, o.w.system_len, o.w.concurrency);
  Table t;
  t.column("pool (blocks)")
      .column("block lookups")
      .column("hits")
      .column("hit rate")
      .column("prefill tokens")
      .column("prefill saved")
      .column("evictions")
      .column("rejected");
  for (const auto& r : runs)
    t.row({std::to_string(r.pool_blocks), std::to_string(r.block_lookups),
           std::to_string(r.block_hits), fmt::format("{:.1f}%", 100 * r.hit_rate()),
           std::to_string(r.prefill_tokens), fmt::format("{:.1f}%", 100 * r.prefill_saved()),
           std::to_string(r.evictions), std::to_string(r.rejected)});
  fmt::print("{}", t.render());
  return gpulab::kExitOk;
}

struct EvictOptions {
  PressureSpec spec;
  RecoveryCost cost;
  std::string model = "llama-3-8b";
};

int run_evict(EvictOptions o, const gpulab::CommonOptions& common, const std::string& metrics_out) {
  const auto m = find_model(o.model);
  if (!m) throw gpulab::UsageError(fmt::format("unknown model '{}' (see kv-math --help)", o.model));
  if (!(o.cost.pcie_gb_per_s > 0) || !(o.cost.prefill_ms_per_token >= 0))
    throw gpulab::UsageError("--pcie-gbs must be > 0 and --prefill-ms-per-token >= 0");
  if (o.spec.sequences > 100'000 || o.spec.prompt + o.spec.generate > 1'000'000 ||
      o.spec.pool_blocks > 10'000'000 || o.spec.host_blocks > 10'000'000)
    throw gpulab::UsageError(
        "at most 100000 sequences, 1000000 tokens each, 10000000 blocks per pool");
  o.cost.kv_bytes_per_token = kv_bytes_per_token(*m);
  std::vector<PressureRun> runs;
  try {
    runs = {run_under_pressure(o.spec, Recovery::kRecompute, o.cost),
            run_under_pressure(o.spec, Recovery::kSwap, o.cost)};
  } catch (const std::invalid_argument& e) {
    throw gpulab::UsageError(e.what());
  }
  const bool ok = runs[0].contents_ok && runs[1].contents_ok;
  if (!metrics_out.empty()) write_metrics_file(metrics_out, eviction_metrics(runs));
  const double block_bytes = static_cast<double>(o.cost.kv_bytes_per_token * o.spec.block_size);
  const double swap_tok = o.cost.swap_round_trip_ms_per_token();
  if (common.json) {
    Json rows = Json::array();
    for (const auto& r : runs)
      rows.push_back({{"policy", r.policy == Recovery::kSwap ? "swap" : "recompute"},
                      {"steps", r.steps},
                      {"preemptions", r.preemptions},
                      {"swap_fallbacks", r.swap_fallbacks},
                      {"blocks_swapped_out", r.blocks_swapped_out},
                      {"blocks_swapped_in", r.blocks_swapped_in},
                      {"tokens_recomputed", r.tokens_recomputed},
                      {"recovery_ms", r.recovery_ms},
                      {"contents_ok", r.contents_ok}});
    gpulab::print_json({{"sequences", o.spec.sequences},
                        {"prompt", o.spec.prompt},
                        {"generate", o.spec.generate},
                        {"pool_blocks", o.spec.pool_blocks},
                        {"host_blocks", o.spec.host_blocks},
                        {"block_size", o.spec.block_size},
                        {"model", o.model},
                        {"kv_bytes_per_token", o.cost.kv_bytes_per_token},
                        {"prefill_ms_per_token", o.cost.prefill_ms_per_token},
                        {"pcie_gb_per_s", o.cost.pcie_gb_per_s},
                        {"swap_round_trip_ms_per_token", swap_tok},
                        {"runs", rows}});
    return ok ? gpulab::kExitOk : gpulab::kExitCheckFailed;
  }
  fmt::print(
      "== eviction under pressure: {} sequences x ({} prompt + {} generated) tokens, {}-block pool "
      "==\n",
      o.spec.sequences, o.spec.prompt, o.spec.generate, o.spec.pool_blocks);
  Table t;
  t.column("recovery", Table::Align::kLeft)
      .column("steps")
      .column("preemptions")
      .column("blocks out")
      .column("blocks in")
      .column("tokens recomputed")
      .column("recovery cost (ms)")
      .column("contents");
  for (const auto& r : runs)
    t.row({r.policy == Recovery::kSwap ? "swap" : "recompute", std::to_string(r.steps),
           std::to_string(r.preemptions), std::to_string(r.blocks_swapped_out),
           std::to_string(r.blocks_swapped_in), std::to_string(r.tokens_recomputed),
           fmt::format("{:.1f}", r.recovery_ms), r.contents_ok ? "PASS" : "FAIL"});
  fmt::print("{}", t.render());
  if (runs[1].swap_fallbacks)
    fmt::print(
        "swap: host pool of {} blocks was full {} times; those preemptions recomputed instead\n",
        o.spec.host_blocks, runs[1].swap_fallbacks);
  fmt::print(
      "cost model: recompute = {} ms/token of prefill; swap = {} per block ({}, {} tokens) over "
      "PCIe {} GB/s "
      "= {:.3f} ms per block each way\n",
      o.cost.prefill_ms_per_token, binary_bytes(static_cast<std::uint64_t>(block_bytes)), o.model,
      o.spec.block_size, o.cost.pcie_gb_per_s, block_bytes / (o.cost.pcie_gb_per_s * 1e9) * 1000.0);
  fmt::print(
      "per token: recompute {:.4f} ms vs swap out+in {:.4f} ms -> {} here; the two break even at "
      "{:.4f} ms/token "
      "of prefill\n",
      o.cost.prefill_ms_per_token, swap_tok,
      swap_tok < o.cost.prefill_ms_per_token
          ? fmt::format("swap is {:.1f}x cheaper", o.cost.prefill_ms_per_token / swap_tok)
          : fmt::format("recompute is {:.1f}x cheaper",
                        swap_tok / std::max(o.cost.prefill_ms_per_token, 1e-12)),
      swap_tok);
  return ok ? gpulab::kExitOk : gpulab::kExitCheckFailed;
}

int run_beam(BeamSpec spec, const gpulab::CommonOptions& common) {
  spec.seed = common.seed;
  std::vector<std::pair<std::string, BeamRun>> runs;
  try {
    BeamSpec sampling = spec;
    sampling.fork_every = 0;
    runs.emplace_back("parallel sampling", run_beams(sampling));
    if (spec.fork_every)
      runs.emplace_back(fmt::format("beam search (prune+fork every {})", spec.fork_every),
                        run_beams(spec));
  } catch (const std::invalid_argument& e) {
    throw gpulab::UsageError(e.what());
  }
  bool ok = true;
  for (const auto& [name, r] : runs) ok = ok && r.contents_ok && r.refcounts_ok && r.all_freed;
  if (common.json) {
    Json rows = Json::array();
    for (const auto& [name, r] : runs)
      rows.push_back({{"mode", name},
                      {"physical_blocks", r.physical_blocks},
                      {"naive_blocks", r.naive_blocks},
                      {"cow_copies", r.cow_copies},
                      {"forks", r.forks},
                      {"shared_prompt_blocks", r.shared_prompt_blocks},
                      {"contents_ok", r.contents_ok},
                      {"refcounts_ok", r.refcounts_ok},
                      {"all_freed", r.all_freed}});
    gpulab::print_json({{"width", spec.width},
                        {"prompt", spec.prompt},
                        {"steps", spec.steps},
                        {"block_size", spec.block_size},
                        {"seed", spec.seed},
                        {"runs", rows}});
    return ok ? gpulab::kExitOk : gpulab::kExitCheckFailed;
  }
  fmt::print(
      "== forks on shared blocks: {} beams, {}-token prompt, {} tokens each, {}-token blocks ==\n",
      spec.width, spec.prompt, spec.steps, spec.block_size);
  Table t;
  t.column("mode", Table::Align::kLeft)
      .column("forks")
      .column("COW copies")
      .column("shared prompt blocks")
      .column("physical blocks")
      .column("private copies would need")
      .column("saved")
      .column("checks");
  for (const auto& [name, r] : runs)
    t.row({name, std::to_string(r.forks), std::to_string(r.cow_copies),
           fmt::format("{} x{}", r.shared_prompt_blocks, spec.width),
           std::to_string(r.physical_blocks), std::to_string(r.naive_blocks),
           fmt::format("{:.0f}%", 100.0 * (1.0 - static_cast<double>(r.physical_blocks) /
                                                     static_cast<double>(r.naive_blocks))),
           r.contents_ok && r.refcounts_ok && r.all_freed ? "PASS" : "FAIL"});
  fmt::print("{}", t.render());
  fmt::print(
      "checks: each beam reads back its own tokens; sum of refcounts == block-table references; "
      "pool empty after\n");
  return ok ? gpulab::kExitOk : gpulab::kExitCheckFailed;
}

struct SweepOptions {
  std::vector<std::size_t> sizes{4, 8, 16, 32};
  std::size_t sequences = 5000;
  std::size_t pool_tokens = 65536;
  std::string plot;
};

int run_sweep(const SweepOptions& o, const gpulab::CommonOptions& common) {
  if (o.sequences == 0 || o.sequences > 1'000'000)
    throw gpulab::UsageError("--sequences must be in 1..1000000");
  if (o.pool_tokens == 0 || o.pool_tokens > (std::size_t{1} << 28))
    throw gpulab::UsageError("--pool-tokens must be in 1..2^28");
  for (const auto bs : o.sizes)
    if (bs == 0 || bs > 4096) throw gpulab::UsageError("--sizes entries must be in 1..4096 tokens");
  const auto lengths = sample_lengths(common.quick ? 500 : o.sequences, common.seed);
  std::vector<BlockSizeRow> rows;
  try {
    rows = block_size_sweep(lengths, o.sizes, o.pool_tokens);
  } catch (const std::invalid_argument& e) {
    throw gpulab::UsageError(e.what());
  }
  if (!o.plot.empty()) {
    gpulab::PlotSpec spec{"Block size: internal fragmentation vs block-table length",
                          "block size (tokens)",
                          "per sequence",
                          true,
                          true,
                          {}};
    gpulab::PlotSeries waste{"wasted KV slots (tokens)", {}, {}, false},
        table{"block-table entries", {}, {}, false};
    for (const auto& r : rows) {
      waste.x.push_back(static_cast<double>(r.block_size));
      waste.y.push_back(r.waste_tokens_mean);
      table.x.push_back(static_cast<double>(r.block_size));
      table.y.push_back(r.table_entries_mean);
    }
    spec.series = {waste, table};
    gpulab::write_svg_plot(spec, o.plot);
  }
  if (common.json) {
    Json out = Json::array();
    for (const auto& r : rows)
      out.push_back({{"block_size", r.block_size},
                     {"waste_tokens_mean", r.waste_tokens_mean},
                     {"waste_percent", r.waste_percent},
                     {"table_entries_mean", r.table_entries_mean},
                     {"sequences_fit", r.sequences_fit}});
    gpulab::print_json({{"sequences", lengths.size()},
                        {"pool_tokens", o.pool_tokens},
                        {"seed", common.seed},
                        {"rows", out}});
    return gpulab::kExitOk;
  }
  double mean_len = 0;
  for (const auto l : lengths) mean_len += static_cast<double>(l);
  mean_len /= static_cast<double>(lengths.size());
  fmt::print(
      "== block size sweep: {} sequences, prompt U{{64..1024}} + output U{{10..300}} (mean {:.0f} "
      "tokens) ==\n",
      lengths.size(), mean_len);
  Table t;
  t.column("block (tokens)")
      .column("wasted slots/seq")
      .column("waste (% of KV)")
      .column("table entries/seq")
      .column(fmt::format("seqs in {} tokens", with_commas(o.pool_tokens)));
  for (const auto& r : rows)
    t.row({std::to_string(r.block_size), fmt::format("{:.1f}", r.waste_tokens_mean),
           fmt::format("{:.2f}%", r.waste_percent), fmt::format("{:.1f}", r.table_entries_mean),
           std::to_string(r.sequences_fit)});
  fmt::print("{}", t.render());
  fmt::print(
      "waste is at most one partial block per sequence (about block/2 on average); the table grows "
      "as 1/block\n");
  return gpulab::kExitOk;
}

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
  auto* metrics_flag = app.add_option(
      "--metrics-out", metrics_out,
      "Also write KV-cache metrics as Prometheus text to FILE, atomically (for gpu-exporter "
      "--textfile-dir): the default run's block states, prefix-cache's hit ratio, evict's "
      "preemptions");

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
  auto* sw_cmd = app.add_subcommand("block-sweep",
                                    "Block size vs internal fragmentation and block-table length");
  sw_cmd->add_option("--sizes", sw.sizes, "Block sizes (tokens)")
      ->delimiter(',')
      ->capture_default_str();
  sw_cmd->add_option("--sequences", sw.sequences, "Sampled sequences")->capture_default_str();
  sw_cmd->add_option("--pool-tokens", sw.pool_tokens, "KV budget for the capacity column (tokens)")
      ->capture_default_str();
  sw_cmd->add_option("--plot", sw.plot, "Write the trade-off to this SVG (gnuplot)");
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
    if (kv_cmd->parsed()) return run_kv_math(kv, common);
    if (px_cmd->parsed()) return run_prefix_cache(px, common, metrics_out);
    if (ev_cmd->parsed()) return run_evict(ev, common, metrics_out);
    if (beam_cmd->parsed()) return run_beam(beam, common);
    if (sw_cmd->parsed()) return run_sweep(sw, common);
    try {
      return run_demo(demo, common, metrics_out);
    } catch (const std::invalid_argument& e) {
      throw gpulab::UsageError(e.what());
    }
  });
}
