#include "paged_kv/reports.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>
#include <stdexcept>

#include "gpulab/errors.hpp"
#include "gpulab/number_format.hpp"
#include "gpulab/table.hpp"
#include "paged_kv/format.hpp"

namespace paged_kv {

using gpulab::Json;
using gpulab::Table;

namespace {

std::string table_str(const std::vector<int>& t) {
  if (t.empty()) return "-";
  std::string s = "[";
  for (std::size_t i = 0; i < t.size(); ++i) s += (i ? " " : "") + std::to_string(t[i]);
  return s + "]";
}

const char* policy_name(Recovery r) {
  return r == Recovery::kSwap ? "swap" : "recompute";
}

bool beam_ok(const BeamRun& r) {
  return r.contents_ok && r.refcounts_ok && r.all_freed;
}

}  // namespace

// ---- default run ----

DemoReport run_demo(const DemoOptions& o) {
  if (o.block_size == 0) throw gpulab::UsageError("--block-size must be at least 1 token");
  if (o.pool_blocks == 0) throw gpulab::UsageError("--pool-blocks must be at least 1");
  if (o.max_len == 0 || o.actual_len == 0 || o.requests == 0 || o.prefix_len == 0)
    throw gpulab::UsageError(
        "--max-len, --actual-len, --requests and --prefix-len must be at least 1");
  if (o.actual_len > o.max_len) throw gpulab::UsageError("--actual-len cannot exceed --max-len");
  if (o.cow_prefix % o.block_size == 0)
    throw gpulab::UsageError(
        "--cow-prefix must end inside a block (not a multiple of --block-size)");
  DemoReport r;
  r.options = o;
  try {
    r.naive = fit_contiguous(o.pool_blocks, o.block_size, o.max_len);
    r.paged = fit_paged(o.pool_blocks, o.block_size, o.actual_len);
    r.share = prefix_sharing(o.pool_blocks, o.block_size, o.requests, o.prefix_len, o.gen_len);
    r.cow = cow_divergence(o.block_size, o.cow_prefix);
  } catch (const std::invalid_argument& e) {
    throw gpulab::UsageError(e.what());
  }
  r.paged_gain = r.naive ? static_cast<double>(r.paged) / static_cast<double>(r.naive) : 0;
  r.share_gain = r.share.blocks_with_sharing ? static_cast<double>(r.share.blocks_without_sharing) /
                                                   static_cast<double>(r.share.blocks_with_sharing)
                                             : 0;
  return r;
}

std::string render(const DemoReport& r) {
  const DemoOptions& o = r.options;
  const SharingResult& share = r.share;
  std::string out;
  auto put = std::back_inserter(out);
  fmt::format_to(put, "== memory efficiency: sequences that fit in a {}-block pool ==\n",
                 o.pool_blocks);
  fmt::format_to(put, "naive contiguous (reserve max_len={})  : {:4} sequences\n", o.max_len,
                 r.naive);
  fmt::format_to(put, "paged (allocate-on-demand, actual={})    : {:4} sequences   ({})\n",
                 o.actual_len, r.paged,
                 r.naive ? fmt::format("{:.1f}x", r.paged_gain) : "naive fits none");
  fmt::format_to(put, "\n== prefix sharing: {} requests, shared {}-token system prompt ==\n",
                 o.requests, o.prefix_len);
  // Pool exhaustion is an outcome to report: the count is then a floor.
  auto exhausted = [&](bool fit, std::size_t served) {
    return fit ? std::string()
               : fmt::format("   (pool exhausted: {} of {} requests fit)", served, o.requests);
  };
  fmt::format_to(put, "without sharing : {:5} blocks used{}\n", share.blocks_without_sharing,
                 exhausted(share.fit_without_sharing, share.served_without_sharing));
  const std::string ratio =
      !share.fit_with_sharing
          ? "ratio unknown: the pool is too small even with sharing"
          : fmt::format("{}{:.1f}x less; shared prefix stored once",
                        share.fit_without_sharing ? "" : "at least ", r.share_gain);
  fmt::format_to(put, "with sharing    : {:5} blocks used   ({}){}\n", share.blocks_with_sharing,
                 ratio, exhausted(share.fit_with_sharing, share.served_with_sharing));
  fmt::format_to(put, "copy-on-write   : {}\n",
                 r.pass() ? "divergence forked block; refcounts correct"
                          : "FAIL: refcounts or contents wrong (see the trace)");

  fmt::format_to(put,
                 "\n== copy-on-write trace: A and B share a {}-token prompt, {}-token blocks ==\n",
                 r.cow.prefix_len, r.cow.block_size);
  Table t;
  t.column("step", Table::Align::kLeft)
      .column("A table", Table::Align::kLeft)
      .column("B table", Table::Align::kLeft)
      .column("refcounts (block:count)", Table::Align::kLeft)
      .column("physical blocks");
  for (const auto& s : r.cow.steps) {
    std::string rc;
    for (const auto& [b, n] : s.refcounts)
      rc += fmt::format("{}{}:{}", rc.empty() ? "" : " ", b, n);
    t.row({s.what, table_str(s.table_a), table_str(s.table_b), rc, std::to_string(s.physical)});
  }
  out += t.render();
  for (const auto& c : r.cow.checks)
    fmt::format_to(put, "{}  {}\n", c.pass ? "PASS" : "FAIL", c.what);
  return out;
}

Json to_json(const DemoReport& r) {
  const DemoOptions& o = r.options;
  Json steps = Json::array();
  for (const auto& s : r.cow.steps) {
    Json rc = Json::object();
    for (const auto& [b, n] : s.refcounts) rc[std::to_string(b)] = n;
    steps.push_back({{"step", s.what},
                     {"table_a", s.table_a},
                     {"table_b", s.table_b},
                     {"refcounts", rc},
                     {"physical_blocks", s.physical}});
  }
  Json checks = Json::array();
  for (const auto& c : r.cow.checks) checks.push_back({{"check", c.what}, {"pass", c.pass}});
  return {{"pool_blocks", o.pool_blocks},
          {"block_size", o.block_size},
          {"naive_contiguous_sequences", r.naive},
          {"paged_sequences", r.paged},
          {"paged_gain", r.paged_gain},
          {"prefix_sharing",
           {{"requests", o.requests},
            {"prefix_tokens", o.prefix_len},
            {"generated_tokens", o.gen_len},
            {"blocks_without_sharing", r.share.blocks_without_sharing},
            {"blocks_with_sharing", r.share.blocks_with_sharing},
            {"fit", r.share.fit_without_sharing && r.share.fit_with_sharing},
            {"reduction", r.share_gain}}},
          {"copy_on_write", {{"steps", steps}, {"checks", checks}, {"pass", r.pass()}}}};
}

// ---- kv-math ----

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
  if (!o.dtype.empty()) {
    const auto dtype = parse_dtype(o.dtype);
    if (!dtype) throw gpulab::UsageError(fmt::format("--dtype: unknown type '{}'", o.dtype));
    m.dtype = *dtype;
  }
  if (o.weights_gb >= 0) m.weights_gb = o.weights_gb;
  return m;
}

KvMathReport run_kv_math(const KvMathOptions& o) {
  KvMathReport r;
  r.options = o;
  r.model = resolve_model(o);
  try {
    r.capacity = kv_capacity(r.model, o.context, o.block_size, o.hbm_gb, o.reserve_gb);
  } catch (const std::invalid_argument& e) {
    throw gpulab::UsageError(e.what());
  }
  return r;
}

std::string render(const KvMathReport& r) {
  const KvMathOptions& o = r.options;
  const ModelShape& m = r.model;
  const KvCapacity& c = r.capacity;
  std::string out;
  auto put = std::back_inserter(out);
  fmt::format_to(put, "== KV-cache math: {} ({} layers x {} KV heads x {} head dim, {}) ==\n",
                 m.name, m.layers, m.kv_heads, m.head_dim, dtype_name(m.dtype));
  fmt::format_to(put, "KV per token    : {} B ({}) = 2 x {} x {} x {} x {} B\n",
                 gpulab::with_commas(c.bytes_per_token), binary_bytes(c.bytes_per_token), m.layers,
                 m.kv_heads, m.head_dim, dtype_bytes(m.dtype));
  fmt::format_to(put, "KV per sequence : {} B ({}, {:.2f} GB) at {} tokens\n",
                 gpulab::with_commas(c.bytes_per_sequence), binary_bytes(c.bytes_per_sequence),
                 static_cast<double>(c.bytes_per_sequence) / 1e9, gpulab::with_commas(o.context));
  fmt::format_to(put, "KV per block    : {} B ({}) at {} tokens per block\n",
                 gpulab::with_commas(c.bytes_per_block), binary_bytes(c.bytes_per_block), o.block_size);
  fmt::format_to(
      put, "KV budget       : {:.1f} GB HBM - {:.1f} GB weights - {:.1f} GB reserve = {:.1f} GB\n",
      o.hbm_gb, m.weights_gb, o.reserve_gb, c.kv_budget_gb);
  if (c.kv_budget_gb <= 0)
    out += "sequences fit   : 0 (the weights alone do not fit: shard the model or add HBM)\n";
  else
    fmt::format_to(put, "sequences fit   : {} concurrent sequences of {} tokens\n", c.sequences_fit,
                   gpulab::with_commas(o.context));
  return out;
}

Json to_json(const KvMathReport& r) {
  const KvMathOptions& o = r.options;
  const ModelShape& m = r.model;
  const KvCapacity& c = r.capacity;
  return {{"model", m.name},
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
          {"sequences_fit", c.sequences_fit}};
}

// ---- prefix-cache ----

PrefixReport run_prefix_cache(PrefixOptions o, std::uint64_t seed) {
  o.w.seed = seed;
  if (o.block_size == 0) throw gpulab::UsageError("--block-size must be at least 1 token");
  PrefixReport r;
  for (const std::size_t p : o.pools) {
    if (p == 0) throw gpulab::UsageError("--pools entries must be at least 1 block");
    try {
      r.runs.push_back(run_prefix_workload(o.w, p, o.block_size));
    } catch (const std::invalid_argument& e) {
      throw gpulab::UsageError(e.what());
    }
  }
  r.options = std::move(o);
  return r;
}

std::string render(const PrefixReport& r) {
  const PrefixWorkload& w = r.options.w;
  std::string out = fmt::format(
      "== automatic prefix cache: {} requests, {} system prompts of {} tokens (Zipf), {} alive at "
      "once ==\n",
      w.requests, w.system_prompts, w.system_len, w.concurrency);
  Table t;
  t.column("pool (blocks)")
      .column("block lookups")
      .column("hits")
      .column("hit rate")
      .column("prefill tokens")
      .column("prefill saved")
      .column("evictions")
      .column("rejected");
  for (const auto& p : r.runs)
    t.row({std::to_string(p.pool_blocks), std::to_string(p.block_lookups),
           std::to_string(p.block_hits), fmt::format("{:.1f}%", 100 * p.hit_rate()),
           std::to_string(p.prefill_tokens), fmt::format("{:.1f}%", 100 * p.prefill_saved()),
           std::to_string(p.evictions), std::to_string(p.rejected)});
  return out + t.render();
}

Json to_json(const PrefixReport& r) {
  const PrefixWorkload& w = r.options.w;
  Json rows = Json::array();
  for (const auto& p : r.runs)
    rows.push_back({{"pool_blocks", p.pool_blocks},
                    {"block_lookups", p.block_lookups},
                    {"block_hits", p.block_hits},
                    {"hit_rate", p.hit_rate()},
                    {"prompt_tokens", p.prompt_tokens},
                    {"prefill_tokens", p.prefill_tokens},
                    {"prefill_saved", p.prefill_saved()},
                    {"evictions", p.evictions},
                    {"rejected", p.rejected}});
  return {{"requests", w.requests},
          {"system_prompts", w.system_prompts},
          {"system_tokens", w.system_len},
          {"concurrency", w.concurrency},
          {"block_size", r.options.block_size},
          {"seed", w.seed},
          {"runs", rows}};
}

// ---- evict ----

EvictReport run_evict(EvictOptions o) {
  const auto m = find_model(o.model);
  if (!m) throw gpulab::UsageError(fmt::format("unknown model '{}' (see kv-math --help)", o.model));
  if (!(o.cost.pcie_gb_per_s > 0) || !(o.cost.prefill_ms_per_token >= 0))
    throw gpulab::UsageError("--pcie-gbs must be > 0 and --prefill-ms-per-token >= 0");
  if (o.spec.sequences > 100'000 || o.spec.prompt + o.spec.generate > 1'000'000 ||
      o.spec.pool_blocks > 10'000'000 || o.spec.host_blocks > 10'000'000)
    throw gpulab::UsageError(
        "at most 100000 sequences, 1000000 tokens each, 10000000 blocks per pool");
  o.cost.kv_bytes_per_token = kv_bytes_per_token(*m);
  EvictReport r;
  try {
    r.runs = {run_under_pressure(o.spec, Recovery::kRecompute, o.cost),
              run_under_pressure(o.spec, Recovery::kSwap, o.cost)};
  } catch (const std::invalid_argument& e) {
    throw gpulab::UsageError(e.what());
  }
  r.options = std::move(o);
  return r;
}

bool EvictReport::pass() const {
  return std::all_of(runs.begin(), runs.end(), [](const PressureRun& p) { return p.contents_ok; });
}

std::string render(const EvictReport& r) {
  const EvictOptions& o = r.options;
  std::string out;
  auto put = std::back_inserter(out);
  fmt::format_to(
      put,
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
  for (const auto& p : r.runs)
    t.row({policy_name(p.policy), std::to_string(p.steps), std::to_string(p.preemptions),
           std::to_string(p.blocks_swapped_out), std::to_string(p.blocks_swapped_in),
           std::to_string(p.tokens_recomputed), fmt::format("{:.1f}", p.recovery_ms),
           p.contents_ok ? "PASS" : "FAIL"});
  out += t.render();
  const std::size_t fallbacks = r.runs.size() > 1 ? r.runs[1].swap_fallbacks : 0;
  if (fallbacks)
    fmt::format_to(
        put,
        "swap: host pool of {} blocks was full {} times; those preemptions recomputed instead\n",
        o.spec.host_blocks, fallbacks);
  const double block_bytes = static_cast<double>(o.cost.kv_bytes_per_token * o.spec.block_size);
  const double swap_tok = o.cost.swap_round_trip_ms_per_token();
  fmt::format_to(
      put,
      "cost model: recompute = {} ms/token of prefill; swap = {} per block ({}, {} tokens) over "
      "PCIe {} GB/s "
      "= {:.3f} ms per block each way\n",
      o.cost.prefill_ms_per_token, binary_bytes(static_cast<std::uint64_t>(block_bytes)), o.model,
      o.spec.block_size, o.cost.pcie_gb_per_s, block_bytes / (o.cost.pcie_gb_per_s * 1e9) * 1000.0);
  fmt::format_to(
      put,
      "per token: recompute {:.4f} ms vs swap out+in {:.4f} ms -> {} here; the two break even at "
      "{:.4f} ms/token "
      "of prefill\n",
      o.cost.prefill_ms_per_token, swap_tok,
      swap_tok < o.cost.prefill_ms_per_token
          ? fmt::format("swap is {:.1f}x cheaper", o.cost.prefill_ms_per_token / swap_tok)
          : fmt::format("recompute is {:.1f}x cheaper",
                        swap_tok / std::max(o.cost.prefill_ms_per_token, 1e-12)),
      swap_tok);
  return out;
}

Json to_json(const EvictReport& r) {
  const EvictOptions& o = r.options;
  Json rows = Json::array();
  for (const auto& p : r.runs)
    rows.push_back({{"policy", policy_name(p.policy)},
                    {"steps", p.steps},
                    {"preemptions", p.preemptions},
                    {"swap_fallbacks", p.swap_fallbacks},
                    {"blocks_swapped_out", p.blocks_swapped_out},
                    {"blocks_swapped_in", p.blocks_swapped_in},
                    {"tokens_recomputed", p.tokens_recomputed},
                    {"recovery_ms", p.recovery_ms},
                    {"contents_ok", p.contents_ok}});
  return {{"sequences", o.spec.sequences},
          {"prompt", o.spec.prompt},
          {"generate", o.spec.generate},
          {"pool_blocks", o.spec.pool_blocks},
          {"host_blocks", o.spec.host_blocks},
          {"block_size", o.spec.block_size},
          {"model", o.model},
          {"kv_bytes_per_token", o.cost.kv_bytes_per_token},
          {"prefill_ms_per_token", o.cost.prefill_ms_per_token},
          {"pcie_gb_per_s", o.cost.pcie_gb_per_s},
          {"swap_round_trip_ms_per_token", o.cost.swap_round_trip_ms_per_token()},
          {"runs", rows}};
}

// ---- beam ----

BeamReport run_beam(BeamSpec spec, std::uint64_t seed) {
  spec.seed = seed;
  BeamReport r;
  try {
    BeamSpec sampling = spec;
    sampling.fork_every = 0;
    r.runs.emplace_back("parallel sampling", run_beams(sampling));
    if (spec.fork_every)
      r.runs.emplace_back(fmt::format("beam search (prune+fork every {})", spec.fork_every),
                          run_beams(spec));
  } catch (const std::invalid_argument& e) {
    throw gpulab::UsageError(e.what());
  }
  r.spec = spec;
  return r;
}

bool BeamReport::pass() const {
  return std::all_of(runs.begin(), runs.end(), [](const auto& run) { return beam_ok(run.second); });
}

std::string render(const BeamReport& r) {
  const BeamSpec& spec = r.spec;
  std::string out = fmt::format(
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
  for (const auto& [name, b] : r.runs)
    t.row({name, std::to_string(b.forks), std::to_string(b.cow_copies),
           fmt::format("{} x{}", b.shared_prompt_blocks, spec.width),
           std::to_string(b.physical_blocks), std::to_string(b.naive_blocks),
           fmt::format("{:.0f}%", 100.0 * (1.0 - static_cast<double>(b.physical_blocks) /
                                                     static_cast<double>(b.naive_blocks))),
           beam_ok(b) ? "PASS" : "FAIL"});
  out += t.render();
  out +=
      "checks: each beam reads back its own tokens; sum of refcounts == block-table references; "
      "pool empty after\n";
  return out;
}

Json to_json(const BeamReport& r) {
  Json rows = Json::array();
  for (const auto& [name, b] : r.runs)
    rows.push_back({{"mode", name},
                    {"physical_blocks", b.physical_blocks},
                    {"naive_blocks", b.naive_blocks},
                    {"cow_copies", b.cow_copies},
                    {"forks", b.forks},
                    {"shared_prompt_blocks", b.shared_prompt_blocks},
                    {"contents_ok", b.contents_ok},
                    {"refcounts_ok", b.refcounts_ok},
                    {"all_freed", b.all_freed}});
  return {{"width", r.spec.width},           {"prompt", r.spec.prompt}, {"steps", r.spec.steps},
          {"block_size", r.spec.block_size}, {"seed", r.spec.seed},     {"runs", rows}};
}

// ---- block-sweep ----

SweepReport run_sweep(const SweepOptions& o, std::uint64_t seed, bool quick) {
  if (o.sequences == 0 || o.sequences > 1'000'000)
    throw gpulab::UsageError("--sequences must be in 1..1000000");
  if (o.pool_tokens == 0 || o.pool_tokens > (std::size_t{1} << 28))
    throw gpulab::UsageError("--pool-tokens must be in 1..2^28");
  for (const auto bs : o.sizes)
    if (bs == 0 || bs > 4096) throw gpulab::UsageError("--sizes entries must be in 1..4096 tokens");
  SweepReport r;
  r.options = o;
  r.seed = seed;
  r.lengths = sample_lengths(quick ? 500 : o.sequences, seed);
  try {
    r.rows = block_size_sweep(r.lengths, o.sizes, o.pool_tokens);
  } catch (const std::invalid_argument& e) {
    throw gpulab::UsageError(e.what());
  }
  return r;
}

std::string render(const SweepReport& r) {
  double mean_len = 0;
  for (const auto l : r.lengths) mean_len += static_cast<double>(l);
  mean_len /= static_cast<double>(std::max<std::size_t>(r.lengths.size(), 1));
  std::string out = fmt::format(
      "== block size sweep: {} sequences, prompt U{{64..1024}} + output U{{10..300}} (mean {:.0f} "
      "tokens) ==\n",
      r.lengths.size(), mean_len);
  Table t;
  t.column("block (tokens)")
      .column("wasted slots/seq")
      .column("waste (% of KV)")
      .column("table entries/seq")
      .column(fmt::format("seqs in {} tokens", gpulab::with_commas(r.options.pool_tokens)));
  for (const auto& row : r.rows)
    t.row({std::to_string(row.block_size), fmt::format("{:.1f}", row.waste_tokens_mean),
           fmt::format("{:.2f}%", row.waste_percent), fmt::format("{:.1f}", row.table_entries_mean),
           std::to_string(row.sequences_fit)});
  out += t.render();
  out +=
      "waste is at most one partial block per sequence (about block/2 on average); the table grows "
      "as 1/block\n";
  return out;
}

Json to_json(const SweepReport& r) {
  Json out = Json::array();
  for (const auto& row : r.rows)
    out.push_back({{"block_size", row.block_size},
                   {"waste_tokens_mean", row.waste_tokens_mean},
                   {"waste_percent", row.waste_percent},
                   {"table_entries_mean", row.table_entries_mean},
                   {"sequences_fit", row.sequences_fit}});
  return {{"sequences", r.lengths.size()},
          {"pool_tokens", r.options.pool_tokens},
          {"seed", r.seed},
          {"rows", out}};
}

gpulab::PlotSpec sweep_plot(const SweepReport& r) {
  gpulab::PlotSpec spec{"Block size: internal fragmentation vs block-table length",
                        "block size (tokens)",
                        "per sequence",
                        true,
                        true,
                        {}};
  gpulab::PlotSeries waste{"wasted KV slots (tokens)", {}, {}, false},
      table{"block-table entries", {}, {}, false};
  for (const auto& row : r.rows) {
    waste.x.push_back(static_cast<double>(row.block_size));
    waste.y.push_back(row.waste_tokens_mean);
    table.x.push_back(static_cast<double>(row.block_size));
    table.y.push_back(row.table_entries_mean);
  }
  spec.series = {waste, table};
  return spec;
}

}  // namespace paged_kv
