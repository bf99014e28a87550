// What each paged-kv run computes and how it prints: one result struct per
// subcommand, built by run_*() from the flags, rendered as the README's text by
// render() and as one JSON document by to_json(). main.cpp only wires flags to
// these, so everything the program prints can be asserted in a unit test.
// The run_*() functions throw gpulab::UsageError for flag values they refuse.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "gpulab/json.hpp"
#include "gpulab/plot.hpp"
#include "paged_kv/beam_search.hpp"
#include "paged_kv/block_size_sweep.hpp"
#include "paged_kv/eviction.hpp"
#include "paged_kv/kv_math.hpp"
#include "paged_kv/memory_regimes.hpp"
#include "paged_kv/prefix_workload.hpp"

namespace paged_kv {

// The default run: the curriculum's memory table and the copy-on-write trace.
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
struct DemoReport {
  DemoOptions options;
  std::size_t naive = 0;  // sequences that fit reserving max_len each
  std::size_t paged = 0;  // sequences that fit allocating on demand
  double paged_gain = 0;  // paged / naive (0 when naive fits none)
  SharingResult share;
  double share_gain = 0;  // blocks without / with sharing
  CowTrace cow;
  [[nodiscard]] bool pass() const { return cow.all_pass(); }
};
DemoReport run_demo(const DemoOptions& o);
std::string render(const DemoReport& r);
gpulab::Json to_json(const DemoReport& r);

// kv-math: bytes per token, sequence and block, and how many sequences fit.
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
// The preset named by --model (llama-3-8b when none and no custom shape),
// with the shape flags laid over it.
ModelShape resolve_model(const KvMathOptions& o);
struct KvMathReport {
  KvMathOptions options;
  ModelShape model;
  KvCapacity capacity;
  [[nodiscard]] bool pass() const { return true; }
};
KvMathReport run_kv_math(const KvMathOptions& o);
std::string render(const KvMathReport& r);
gpulab::Json to_json(const KvMathReport& r);

// prefix-cache: the automatic prefix cache's hit rate at each pool size.
struct PrefixOptions {
  PrefixWorkload w;
  std::vector<std::size_t> pools{1536, 2048, 3072, 4096, 8192};
  std::size_t block_size = 16;
};
struct PrefixReport {
  PrefixOptions options;  // options.w.seed is the seed that ran
  std::vector<PrefixRun> runs;
  [[nodiscard]] bool pass() const { return true; }
};
PrefixReport run_prefix_cache(PrefixOptions o, std::uint64_t seed);
std::string render(const PrefixReport& r);
gpulab::Json to_json(const PrefixReport& r);

// evict: the same overloaded pool recovered by recompute and by swap.
struct EvictOptions {
  PressureSpec spec;
  RecoveryCost cost;
  std::string model = "llama-3-8b";
};
struct EvictReport {
  EvictOptions options;           // options.cost.kv_bytes_per_token filled in from the model
  std::vector<PressureRun> runs;  // recompute, then swap
  [[nodiscard]] bool pass() const;
};
EvictReport run_evict(EvictOptions o);
std::string render(const EvictReport& r);
gpulab::Json to_json(const EvictReport& r);

// beam: parallel sampling, and beam search when fork_every > 0.
struct BeamReport {
  BeamSpec spec;
  std::vector<std::pair<std::string, BeamRun>> runs;  // (mode, run)
  [[nodiscard]] bool pass() const;
};
BeamReport run_beam(BeamSpec spec, std::uint64_t seed);
std::string render(const BeamReport& r);
gpulab::Json to_json(const BeamReport& r);

// block-sweep: internal fragmentation vs block-table length per block size.
struct SweepOptions {
  std::vector<std::size_t> sizes{4, 8, 16, 32};
  std::size_t sequences = 5000;
  std::size_t pool_tokens = 65536;
};
struct SweepReport {
  SweepOptions options;
  std::uint64_t seed = 0;
  std::vector<std::size_t> lengths;  // the sampled sequence lengths
  std::vector<BlockSizeRow> rows;
  [[nodiscard]] bool pass() const { return true; }
};
// quick: 500 sequences instead of o.sequences.
SweepReport run_sweep(const SweepOptions& o, std::uint64_t seed, bool quick);
std::string render(const SweepReport& r);
gpulab::Json to_json(const SweepReport& r);
// The --plot picture: waste and table length against block size.
gpulab::PlotSpec sweep_plot(const SweepReport& r);

}  // namespace paged_kv
