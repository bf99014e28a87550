// paged-kv: the PagedAttention memory manager as a runnable lab. With no
// subcommand it prints the curriculum's memory table and a checked
// copy-on-write trace; subcommands run the extensions.
#include <fmt/core.h>

#include <string>
#include <vector>

#include "gpulab/cli.hpp"
#include "gpulab/json.hpp"
#include "gpulab/table.hpp"
#include "paged_kv/format.hpp"
#include "paged_kv/kv_math.hpp"
#include "paged_kv/memory_regimes.hpp"
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

int run_demo(const DemoOptions& o, const gpulab::CommonOptions& common) {
  if (o.block_size == 0) throw gpulab::UsageError("--block-size must be at least 1 token");
  if (o.pool_blocks == 0) throw gpulab::UsageError("--pool-blocks must be at least 1");
  if (o.max_len == 0 || o.actual_len == 0 || o.requests == 0 || o.prefix_len == 0)
    throw gpulab::UsageError("--max-len, --actual-len, --requests and --prefix-len must be at least 1");
  if (o.actual_len > o.max_len) throw gpulab::UsageError("--actual-len cannot exceed --max-len");
  if (o.cow_prefix % o.block_size == 0)
    throw gpulab::UsageError("--cow-prefix must end inside a block (not a multiple of --block-size)");

  const std::size_t naive = fit_contiguous(o.pool_blocks, o.block_size, o.max_len);
  const std::size_t paged = fit_paged(o.pool_blocks, o.block_size, o.actual_len);
  const SharingResult share = prefix_sharing(o.pool_blocks, o.block_size, o.requests, o.prefix_len, o.gen_len);
  const CowTrace cow = cow_divergence(o.block_size, o.cow_prefix);
  const double paged_gain = naive ? static_cast<double>(paged) / static_cast<double>(naive) : 0;
  const double share_gain = share.blocks_with_sharing
                                ? static_cast<double>(share.blocks_without_sharing) /
                                      static_cast<double>(share.blocks_with_sharing)
                                : 0;
  const bool pools_ok = share.fit_without_sharing && share.fit_with_sharing;

  if (common.json) {
    Json steps = Json::array();
    for (const auto& s : cow.steps) {
      Json rc = Json::object();
      for (const auto& [b, n] : s.refcounts) rc[std::to_string(b)] = n;
      steps.push_back({{"step", s.what}, {"table_a", s.table_a}, {"table_b", s.table_b},
                       {"refcounts", rc}, {"physical_blocks", s.physical}});
    }
    Json checks = Json::array();
    for (const auto& c : cow.checks) checks.push_back({{"check", c.what}, {"pass", c.pass}});
    gpulab::print_json({{"pool_blocks", o.pool_blocks},
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
    return cow.all_pass() && pools_ok ? gpulab::kExitOk : gpulab::kExitCheckFailed;
  }

  fmt::print("== memory efficiency: sequences that fit in a {}-block pool ==\n", o.pool_blocks);
  fmt::print("naive contiguous (reserve max_len={})  : {:4} sequences\n", o.max_len, naive);
  fmt::print("paged (allocate-on-demand, actual={})    : {:4} sequences   ({:.1f}x)\n", o.actual_len, paged,
             paged_gain);
  fmt::print("\n== prefix sharing: {} requests, shared {}-token system prompt ==\n", o.requests, o.prefix_len);
  fmt::print("without sharing : {:5} blocks used{}\n", share.blocks_without_sharing,
             share.fit_without_sharing ? "" : "   (pool exhausted: FAIL)");
  fmt::print("with sharing    : {:5} blocks used   ({:.1f}x less; shared prefix stored once){}\n",
             share.blocks_with_sharing, share_gain, share.fit_with_sharing ? "" : "   (pool exhausted: FAIL)");
  fmt::print("copy-on-write   : {}\n", cow.all_pass() ? "divergence forked block; refcounts correct"
                                                      : "FAIL: refcounts or contents wrong (see the trace)");

  fmt::print("\n== copy-on-write trace: A and B share a {}-token prompt, {}-token blocks ==\n", cow.prefix_len,
             cow.block_size);
  Table t;
  t.column("step", Table::Align::kLeft).column("A table", Table::Align::kLeft).column("B table", Table::Align::kLeft)
      .column("refcounts (block:count)", Table::Align::kLeft).column("physical blocks");
  for (const auto& s : cow.steps) {
    std::string rc;
    for (const auto& [b, n] : s.refcounts) rc += fmt::format("{}{}:{}", rc.empty() ? "" : " ", b, n);
    t.row({s.what, table_str(s.table_a), table_str(s.table_b), rc, std::to_string(s.physical)});
  }
  fmt::print("{}", t.render());
  for (const auto& c : cow.checks) fmt::print("{}  {}\n", c.pass ? "PASS" : "FAIL", c.what);
  return cow.all_pass() && pools_ok ? gpulab::kExitOk : gpulab::kExitCheckFailed;
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
      throw gpulab::UsageError("a custom shape needs --layers, --kv-heads and --head-dim (each >= 1), or --model");
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
  fmt::print("== KV-cache math: {} ({} layers x {} KV heads x {} head dim, {}) ==\n", m.name, m.layers, m.kv_heads,
             m.head_dim, dtype_name(m.dtype));
  fmt::print("KV per token    : {} B ({}) = 2 x {} x {} x {} x {} B\n", with_commas(c.bytes_per_token),
             binary_bytes(c.bytes_per_token), m.layers, m.kv_heads, m.head_dim, dtype_bytes(m.dtype));
  fmt::print("KV per sequence : {} B ({}, {:.2f} GB) at {} tokens\n", with_commas(c.bytes_per_sequence),
             binary_bytes(c.bytes_per_sequence), static_cast<double>(c.bytes_per_sequence) / 1e9,
             with_commas(o.context));
  fmt::print("KV per block    : {} B ({}) at {} tokens per block\n", with_commas(c.bytes_per_block),
             binary_bytes(c.bytes_per_block), o.block_size);
  fmt::print("KV budget       : {:.1f} GB HBM - {:.1f} GB weights - {:.1f} GB reserve = {:.1f} GB\n", o.hbm_gb,
             m.weights_gb, o.reserve_gb, c.kv_budget_gb);
  if (c.kv_budget_gb <= 0)
    fmt::print("sequences fit   : 0 (the weights alone do not fit: shard the model or add HBM)\n");
  else
    fmt::print("sequences fit   : {} concurrent sequences of {} tokens\n", c.sequences_fit, with_commas(o.context));
  return gpulab::kExitOk;
}

struct PrefixOptions {
  PrefixWorkload w;
  std::vector<std::size_t> pools{1536, 2048, 3072, 4096, 8192};
  std::size_t block_size = 16;
};

int run_prefix_cache(PrefixOptions o, const gpulab::CommonOptions& common) {
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
  if (common.json) {
    Json rows = Json::array();
    for (const auto& r : runs)
      rows.push_back({{"pool_blocks", r.pool_blocks}, {"block_lookups", r.block_lookups}, {"block_hits", r.block_hits},
                      {"hit_rate", r.hit_rate()}, {"prompt_tokens", r.prompt_tokens},
                      {"prefill_tokens", r.prefill_tokens}, {"prefill_saved", r.prefill_saved()},
                      {"evictions", r.evictions}, {"rejected", r.rejected}});
    gpulab::print_json({{"requests", o.w.requests}, {"system_prompts", o.w.system_prompts},
                        {"system_tokens", o.w.system_len}, {"concurrency", o.w.concurrency},
                        {"block_size", o.block_size}, {"seed", common.seed}, {"runs", rows}});
    return gpulab::kExitOk;
  }
  fmt::print("== automatic prefix cache: {} requests, {} system prompts of {} tokens (Zipf), {} alive at once ==\n",
             o.w.requests, o.w.system_prompts, o.w.system_len, o.w.concurrency);
  Table t;
  t.column("pool (blocks)").column("block lookups").column("hits").column("hit rate").column("prefill tokens")
      .column("prefill saved").column("evictions").column("rejected");
  for (const auto& r : runs)
    t.row({std::to_string(r.pool_blocks), std::to_string(r.block_lookups), std::to_string(r.block_hits),
           fmt::format("{:.1f}%", 100 * r.hit_rate()), std::to_string(r.prefill_tokens),
           fmt::format("{:.1f}%", 100 * r.prefill_saved()), std::to_string(r.evictions),
           std::to_string(r.rejected)});
  fmt::print("{}", t.render());
  return gpulab::kExitOk;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "paged-kv: the PagedAttention KV-cache manager (fixed-size blocks, refcounts, copy-on-write).\n"
      "No subcommand: the curriculum's memory table and a checked copy-on-write trace."};
  app.fallthrough();
  app.require_subcommand(0, 1);
  gpulab::CommonOptions common;
  gpulab::add_json_flag(app, common);
  gpulab::add_seed_flag(app, common);

  DemoOptions demo;
  app.add_option("--pool-blocks", demo.pool_blocks, "Physical blocks in the pool")->capture_default_str();
  app.add_option("--block-size", demo.block_size, "Tokens per block")->capture_default_str();
  app.add_option("--max-len", demo.max_len, "Naive allocator: tokens reserved per sequence")->capture_default_str();
  app.add_option("--actual-len", demo.actual_len, "Paged allocator: tokens each sequence really holds")
      ->capture_default_str();
  app.add_option("--requests", demo.requests, "Prefix sharing: requests")->capture_default_str();
  app.add_option("--prefix-len", demo.prefix_len, "Prefix sharing: shared system-prompt tokens")->capture_default_str();
  app.add_option("--gen-len", demo.gen_len, "Prefix sharing: tokens each request generates")->capture_default_str();
  app.add_option("--cow-prefix", demo.cow_prefix, "COW trace: shared prompt tokens (must end inside a block)")
      ->capture_default_str();

  KvMathOptions kv;
  auto* kv_cmd = app.add_subcommand("kv-math", "KV bytes per token and sequence, and how many sequences fit in HBM");
  kv_cmd->add_option("--model", kv.model, "Preset: llama-3-8b (default), llama-3-70b, llama-2-7b, llama-2-13b, "
                                          "llama-2-70b, mistral-7b");
  kv_cmd->add_option("--layers", kv.layers, "Transformer layers (overrides the preset)");
  kv_cmd->add_option("--kv-heads", kv.kv_heads, "KV heads after GQA (overrides the preset)");
  kv_cmd->add_option("--head-dim", kv.head_dim, "Head dimension (overrides the preset)");
  kv_cmd->add_option("--dtype", kv.dtype, "KV element type (overrides the preset)")
      ->check(CLI::IsMember({"fp32", "fp16", "bf16", "fp8", "int8"}));
  kv_cmd->add_option("--context", kv.context, "Tokens per sequence")->capture_default_str();
  kv_cmd->add_option("--block-size", kv.block_size, "Tokens per KV block")->capture_default_str();
  kv_cmd->add_option("--hbm-gb", kv.hbm_gb, "GPU memory in GB (1e9 bytes)")->capture_default_str();
  kv_cmd->add_option("--weights-gb", kv.weights_gb, "Model weights in GB (default: the preset's; 0 for a custom shape)");
  kv_cmd->add_option("--reserve-gb", kv.reserve_gb, "GB kept back for activations and fragmentation")
      ->capture_default_str();

  PrefixOptions px;
  auto* px_cmd = app.add_subcommand("prefix-cache", "Automatic prefix cache (chained block hashes, LRU eviction): hit rate vs pool size");
  px_cmd->add_option("--requests", px.w.requests, "Requests")->capture_default_str();
  px_cmd->add_option("--system-prompts", px.w.system_prompts, "Distinct system prompts (Zipf popularity)")
      ->capture_default_str();
  px_cmd->add_option("--system-len", px.w.system_len, "Tokens per system prompt")->capture_default_str();
  px_cmd->add_option("--user-min", px.w.user_min, "Shortest user turn (tokens)")->capture_default_str();
  px_cmd->add_option("--user-max", px.w.user_max, "Longest user turn (tokens)")->capture_default_str();
  px_cmd->add_option("--generated", px.w.generated, "Tokens each request generates")->capture_default_str();
  px_cmd->add_option("--concurrency", px.w.concurrency, "Requests holding KV at once")->capture_default_str();
  px_cmd->add_option("--pools", px.pools, "Pool sizes to run (blocks)")->capture_default_str()->delimiter(',');
  px_cmd->add_option("--block-size", px.block_size, "Tokens per block")->capture_default_str();

  return gpulab::run_program(kProgram, app, argc, argv, [&] {
    if (kv_cmd->parsed()) return run_kv_math(kv, common);
    if (px_cmd->parsed()) return run_prefix_cache(px, common);
    try {
      return run_demo(demo, common);
    } catch (const std::invalid_argument& e) {
      throw gpulab::UsageError(e.what());
    }
  });
}
