// batching-sim: an LLM server under Poisson load, iteration by iteration.
// With no subcommand it prints the curriculum's two tables (static vs
// continuous batching; goodput against batch depth); subcommands run the
// extensions.
#include <fmt/core.h>

#include <algorithm>
#include <string>
#include <vector>

#include "batching/continuous_batching.hpp"
#include "batching/disaggregation.hpp"
#include "batching/kv_model.hpp"
#include "batching/metrics.hpp"
#include "batching/metrics_out.hpp"
#include "batching/static_batching.hpp"
#include "batching/trace.hpp"
#include "batching/workload.hpp"
#include "gpulab/cli.hpp"
#include "gpulab/json.hpp"
#include "gpulab/plot.hpp"
#include "gpulab/progress.hpp"
#include "gpulab/stats.hpp"
#include "gpulab/table.hpp"
#include "paged_kv/kv_math.hpp"

namespace {

using namespace batching;
using gpulab::Json;
using gpulab::Table;

constexpr const char* kProgram = "batching-sim";

struct Shared {
  gpulab::CommonOptions common;
  WorkloadSpec workload;
  CostModel cost;
  Slo slo;
  std::size_t max_batch = 16;
  std::string metrics_out;  // --metrics-out FILE: every policy's serving metrics
};

// summarize(), and the run's requests into --metrics-out's families under `policy`.
Metrics record(ServingMetrics& sm, const std::string& policy, const std::vector<Request>& reqs,
               const std::vector<Outcome>& outs, const Slo& slo) {
  sm.add_run(policy, reqs, outs, slo);
  return summarize(reqs, outs, slo);
}

void write_metrics(const Shared& s, const ServingMetrics& sm) {
  if (!s.metrics_out.empty()) sm.write(s.metrics_out);
}

Json metrics_json(const Metrics& m) {
  return {{"completed", m.completed},
          {"shed", m.shed},
          {"slo_met", m.slo_met},
          {"throughput_tok_s", m.throughput_tok_s},
          {"goodput_tok_s", m.goodput_tok_s},
          {"ttft_p50_ms", m.ttft_p50},
          {"ttft_p99_ms", m.ttft_p99},
          {"tpot_p50_ms", m.tpot_p50},
          {"tpot_p99_ms", m.tpot_p99},
          {"e2e_p50_ms", m.e2e_p50},
          {"e2e_p99_ms", m.e2e_p99},
          {"worst_gap_p99_ms", m.worst_gap_p99},
          {"output_tokens", m.output_tokens},
          {"makespan_ms", m.makespan_ms}};
}

long r0(double v) {
  return std::lround(v);
}

void validate_shared(const Shared& s) {
  validate(s.workload);
  validate(s.cost);
  if (s.max_batch == 0 || s.max_batch > 100'000)
    throw gpulab::UsageError("--max-batch must be in 1..100000");
  if (!(s.slo.ttft_ms > 0) || !(s.slo.tpot_ms > 0)) throw gpulab::UsageError("SLOs must be > 0 ms");
}

std::string workload_line(const Shared& s, const std::string& trace, std::size_t n) {
  if (!trace.empty()) return fmt::format("workload: {} requests replayed from {}", n, trace);
  const auto& w = s.workload;
  return fmt::format(
      "workload: {} requests, Poisson {} req/s, prompt U{{{}..{}}}, output U{{{}..{}}} tokens, "
      "seed {}",
      w.requests, w.rate_per_s, w.prompt_min, w.prompt_max, w.output_min, w.output_max,
      s.common.seed);
}

std::string cost_line(const CostModel& c, bool separate_prefill = true) {
  return fmt::format("model: iteration = {} + {} x max_batch ms; prefill {} ms/token{}",
                     c.iter_base_ms, c.iter_per_slot_ms, c.prefill_ms_per_token,
                     separate_prefill ? ", a separate step that stalls decodes" : "");
}

// ---- the curriculum's two tables -------------------------------------------

struct MainOptions {
  std::string trace;
  std::string plot;
  std::vector<std::size_t> depths{4, 8, 16, 32, 64};
};

int run_main(Shared& s, const MainOptions& o) {
  validate_shared(s);
  for (const auto d : o.depths)
    if (d == 0 || d > 100'000) throw gpulab::UsageError("--depths entries must be in 1..100000");
  const std::vector<Request> reqs =
      o.trace.empty() ? generate(s.workload, s.common.seed) : load_trace(o.trace);

  ContinuousOptions copt;
  Metrics stat, cont;
  std::vector<Metrics> sweep;
  ServingMetrics sm;
  {
    // Progress on stderr, only on a terminal, cleared before the tables print.
    gpulab::Progress progress("simulating", 2 + o.depths.size());
    copt.max_batch = s.max_batch;
    stat = record(sm, "static", reqs, simulate_static(reqs, s.max_batch, s.cost), s.slo);
    progress.update(1);
    cont = record(sm, "continuous", reqs, simulate_continuous(reqs, copt, s.cost), s.slo);
    progress.update(2);
    for (const std::size_t d : o.depths) {
      copt.max_batch = d;
      sweep.push_back(summarize(reqs, simulate_continuous(reqs, copt, s.cost), s.slo));
      progress.update(2 + sweep.size());
    }
  }
  write_metrics(s, sm);
  std::size_t best = 0;
  for (std::size_t i = 1; i < sweep.size(); ++i)
    if (sweep[i].goodput_tok_s > sweep[best].goodput_tok_s) best = i;
  const double thru_gain =
      stat.throughput_tok_s > 0 ? cont.throughput_tok_s / stat.throughput_tok_s : 0;
  const double ttft_gain = cont.ttft_p99 > 0 ? stat.ttft_p99 / cont.ttft_p99 : 0;

  auto annotate = [&](std::size_t i) -> std::string {
    const double iter = s.cost.iteration_ms(o.depths[i]);
    const Metrics& m = sweep[i];
    if (iter >= s.slo.tpot_ms)
      return fmt::format("<- TPOT SLO blown (iter time {}ms > {}ms)", r0(iter), r0(s.slo.tpot_ms));
    if (m.goodput_tok_s >= 0.9 * m.throughput_tok_s)
      return "<- both SLOs met: goodput ~= throughput";
    const double ceiling = static_cast<double>(o.depths[i]) / iter * 1000.0;
    if (m.throughput_tok_s >= 0.9 * ceiling)
      return fmt::format("<- batch too small: saturates at {} tok/s -> TTFT SLO fails",
                         r0(ceiling));
    return fmt::format("<- TTFT SLO fails for {}% of requests",
                       r0(100.0 * static_cast<double>(m.completed - m.slo_met) /
                          static_cast<double>(m.completed)));
  };

  if (!o.plot.empty()) {
    gpulab::PlotSpec spec{"Continuous batching: throughput and goodput vs batch depth",
                          "max_batch",
                          "tokens/s",
                          true,
                          false,
                          {}};
    gpulab::PlotSeries thru{"throughput", {}, {}, false},
        good{"goodput (both SLOs met)", {}, {}, false};
    for (std::size_t i = 0; i < sweep.size(); ++i) {
      thru.x.push_back(static_cast<double>(o.depths[i]));
      thru.y.push_back(sweep[i].throughput_tok_s);
      good.x.push_back(static_cast<double>(o.depths[i]));
      good.y.push_back(sweep[i].goodput_tok_s);
    }
    spec.series = {thru, good};
    gpulab::write_svg_plot(spec, o.plot);
  }

  if (s.common.json) {
    Json rows = Json::array();
    for (std::size_t i = 0; i < sweep.size(); ++i) {
      Json r = metrics_json(sweep[i]);
      r["max_batch"] = o.depths[i];
      r["iteration_ms"] = s.cost.iteration_ms(o.depths[i]);
      rows.push_back(r);
    }
    gpulab::print_json({{"requests", reqs.size()},
                        {"seed", s.common.seed},
                        {"trace", o.trace},
                        {"max_batch", s.max_batch},
                        {"slo", {{"ttft_ms", s.slo.ttft_ms}, {"tpot_ms", s.slo.tpot_ms}}},
                        {"static", metrics_json(stat)},
                        {"continuous", metrics_json(cont)},
                        {"throughput_gain", thru_gain},
                        {"p99_ttft_gain", ttft_gain},
                        {"sweep", rows},
                        {"goodput_optimal_max_batch", o.depths[best]}});
    return gpulab::kExitOk;
  }

  fmt::print("== static vs continuous batching ({}) ==\n",
             o.trace.empty() ? "Poisson load" : "trace replay");
  fmt::print("{:<12}{:>12}{:>10}{:>10}{:>10}{:>10}\n", "policy", "thru(tok/s)", "p50_TTFT",
             "p99_TTFT", "p50_TPOT", "completed");
  for (const auto& [name, m] : {std::pair{"static", &stat}, std::pair{"continuous", &cont}})
    fmt::print("{:<12}{:>12}{:>10}{:>10}{:>10}{:>10}\n", name, r0(m->throughput_tok_s),
               r0(m->ttft_p50), r0(m->ttft_p99), r0(m->tpot_p50), m->completed);
  fmt::print("  -> continuous: {:.1f}x throughput, {}x lower p99 TTFT\n", thru_gain, r0(ttft_gain));
  fmt::print("\n== goodput vs batch depth (SLO: TTFT<{}ms, TPOT<{}ms) ==\n", r0(s.slo.ttft_ms),
             r0(s.slo.tpot_ms));
  fmt::print("{:>10}{:>12}{:>10}\n", "max_batch", "throughput", "goodput");
  for (std::size_t i = 0; i < sweep.size(); ++i)
    fmt::print("{:>10}{:>12}{:>10}   {}\n", o.depths[i], r0(sweep[i].throughput_tok_s),
               r0(sweep[i].goodput_tok_s), annotate(i));
  fmt::print("goodput-optimal batch depth: {}\n", o.depths[best]);

  fmt::print("\n== latency detail (max_batch {}; all times in ms, rates in tok/s) ==\n",
             s.max_batch);
  Table t;
  t.column("policy", Table::Align::kLeft)
      .column("TTFT p50")
      .column("TTFT p99")
      .column("TPOT p50")
      .column("TPOT p99")
      .column("E2E p50")
      .column("E2E p99")
      .column("goodput")
      .column("SLO met");
  for (const auto& [name, m] : {std::pair{"static", &stat}, std::pair{"continuous", &cont}})
    t.row({name, fmt::format("{:.0f}", m->ttft_p50), fmt::format("{:.0f}", m->ttft_p99),
           fmt::format("{:.1f}", m->tpot_p50), fmt::format("{:.1f}", m->tpot_p99),
           fmt::format("{:.0f}", m->e2e_p50), fmt::format("{:.0f}", m->e2e_p99),
           fmt::format("{:.0f}", m->goodput_tok_s), fmt::format("{}/{}", m->slo_met, m->requests)});
  fmt::print("{}", t.render());
  fmt::print("{}\n{}\n", workload_line(s, o.trace, reqs.size()), cost_line(s.cost));
  return gpulab::kExitOk;
}

// ---- extension: prefill interference (chunked prefill, disaggregation) -----

struct InterferenceOptions {
  std::size_t chunk = 2048;  // vLLM's default max_num_batched_tokens
  std::string model = "llama-3-8b";
  double nvlink_gbs = 900;
  double ib_gbs = 50;
};

int run_interference(Shared& s, const InterferenceOptions& o) {
  validate_shared(s);
  if (o.chunk == 0) throw gpulab::UsageError("--chunk must be at least 1 token");
  if (!(o.nvlink_gbs > 0) || !(o.ib_gbs > 0))
    throw gpulab::UsageError("link bandwidths must be > 0 GB/s");
  const auto model = paged_kv::find_model(o.model);
  if (!model)
    throw gpulab::UsageError(
        fmt::format("unknown model '{}' (see paged-kv kv-math --help)", o.model));
  const std::uint64_t kv_per_token = paged_kv::kv_bytes_per_token(*model);
  const auto reqs = generate(s.workload, s.common.seed);

  struct Row {
    std::string name;
    int gpus;
    Metrics m;
    double handoff_p50_ms = 0;
  };
  std::vector<Row> rows;
  ServingMetrics sm;
  ContinuousOptions copt;
  copt.max_batch = s.max_batch;
  rows.push_back({"colocated, whole-prompt prefill", 1,
                  record(sm, "colocated", reqs, simulate_continuous(reqs, copt, s.cost), s.slo)});
  copt.prefill_chunk = o.chunk;
  rows.push_back(
      {fmt::format("colocated, chunked prefill ({} tok)", o.chunk), 1,
       record(sm, "chunked-prefill", reqs, simulate_continuous(reqs, copt, s.cost), s.slo)});
  for (const auto& [label, gbs] :
       {std::pair{"NVLink", o.nvlink_gbs}, std::pair{"InfiniBand", o.ib_gbs}}) {
    DisaggOptions d{s.max_batch, kv_per_token, gbs};
    std::vector<double> h;
    for (const auto& r : reqs) h.push_back(handoff_ms(d, r.prompt_tokens));
    std::nth_element(h.begin(), h.begin() + static_cast<std::ptrdiff_t>(h.size() / 2), h.end());
    rows.push_back({fmt::format("disaggregated, KV over {} {} GB/s", label, gbs), 2,
                    record(sm,
                           fmt::format("disaggregated-{}",
                                       label == std::string_view("NVLink") ? "nvlink" : "ib"),
                           reqs, simulate_disaggregated(reqs, d, s.cost), s.slo),
                    h[h.size() / 2]});
  }
  write_metrics(s, sm);

  if (s.common.json) {
    Json out = Json::array();
    for (const auto& r : rows) {
      Json j = metrics_json(r.m);
      j["policy"] = r.name;
      j["gpus"] = r.gpus;
      j["handoff_p50_ms"] = r.handoff_p50_ms;
      out.push_back(j);
    }
    gpulab::print_json({{"requests", reqs.size()},
                        {"seed", s.common.seed},
                        {"long_fraction", s.workload.long_fraction},
                        {"model", o.model},
                        {"kv_bytes_per_token", kv_per_token},
                        {"rows", out}});
    return gpulab::kExitOk;
  }
  fmt::print(
      "== prefill interference: {:.0f}% long prompts U{{{}..{}}}, the rest U{{{}..{}}}, max_batch "
      "{} ==\n",
      100 * s.workload.long_fraction, s.workload.long_min, s.workload.long_max,
      s.workload.prompt_min, s.workload.prompt_max, s.max_batch);
  Table t;
  t.column("policy", Table::Align::kLeft)
      .column("GPUs")
      .column("TTFT p50 (ms)")
      .column("TTFT p99 (ms)")
      .column("TPOT p99 (ms)")
      .column("worst gap p99 (ms)")
      .column("KV hand-off p50 (ms)")
      .column("goodput (tok/s)")
      .column("goodput/GPU");
  for (const auto& r : rows)
    t.row({r.name, std::to_string(r.gpus), fmt::format("{:.0f}", r.m.ttft_p50),
           fmt::format("{:.0f}", r.m.ttft_p99), fmt::format("{:.1f}", r.m.tpot_p99),
           fmt::format("{:.0f}", r.m.worst_gap_p99),
           r.gpus > 1 ? fmt::format("{:.2f}", r.handoff_p50_ms) : "-",
           fmt::format("{:.0f}", r.m.goodput_tok_s),
           fmt::format("{:.0f}", r.m.goodput_tok_s / r.gpus)});
  fmt::print("{}", t.render());
  fmt::print(
      "KV hand-off = {} B/token ({}) x prompt tokens / link bandwidth; SLO: TTFT<{}ms, TPOT<{}ms\n",
      kv_per_token, o.model, r0(s.slo.ttft_ms), r0(s.slo.tpot_ms));
  fmt::print("{}\n{}\n", workload_line(s, "", reqs.size()), cost_line(s.cost, false));
  return gpulab::kExitOk;
}

// ---- extension: prefix-cache integration -----------------------------------

struct PrefixOptions {
  std::size_t pool_blocks = 8192;
  std::size_t block_size = 16;
};

int run_prefix(Shared& s, const PrefixOptions& o) {
  validate_shared(s);
  if (o.pool_blocks == 0 || o.block_size == 0)
    throw gpulab::UsageError("--pool-blocks and --block-size must be >= 1");
  if (o.pool_blocks * o.block_size > (std::size_t{1} << 28))
    throw gpulab::UsageError("--pool-blocks x --block-size must be at most 2^28 tokens");
  const auto reqs = generate(s.workload, s.common.seed);
  struct Row {
    std::string name;
    Metrics m;
    PrefixKvStats kv;
    double hit_ttft_p50 = 0, miss_ttft_p50 = 0;
  };
  std::vector<Row> rows;
  ServingMetrics sm;
  for (const bool caching : {false, true}) {
    PagedPrefixKv kv(o.pool_blocks, o.block_size, caching);
    ContinuousOptions copt;
    copt.max_batch = s.max_batch;
    copt.kv = &kv;
    const auto outs = simulate_continuous(reqs, copt, s.cost);
    const std::string slug = caching ? "prefix-cache" : "no-prefix-cache";
    Row row{caching ? "paged KV + automatic prefix cache" : "paged KV, no prefix cache",
            record(sm, slug, reqs, outs, s.slo), kv.stats()};
    sm.add_prefix_cache(slug, row.kv);
    std::vector<double> hit, miss;
    for (std::size_t i = 0; i < reqs.size(); ++i)
      if (outs[i].served)
        (outs[i].cached_tokens > 0 ? hit : miss).push_back(ttft_ms(reqs[i], outs[i]));
    row.hit_ttft_p50 = hit.empty() ? 0 : gpulab::percentile(hit, 50);
    row.miss_ttft_p50 = miss.empty() ? 0 : gpulab::percentile(miss, 50);
    rows.push_back(row);
  }
  write_metrics(s, sm);
  if (s.common.json) {
    Json out = Json::array();
    for (const auto& r : rows) {
      Json j = metrics_json(r.m);
      j["policy"] = r.name;
      j["block_lookups"] = r.kv.block_lookups;
      j["block_hits"] = r.kv.block_hits;
      j["evictions"] = r.kv.evictions;
      j["prompt_tokens"] = r.m.prompt_tokens;
      j["cached_tokens"] = r.m.cached_tokens;
      j["ttft_p50_hit_ms"] = r.hit_ttft_p50;
      j["ttft_p50_miss_ms"] = r.miss_ttft_p50;
      out.push_back(j);
    }
    gpulab::print_json({{"requests", reqs.size()},
                        {"seed", s.common.seed},
                        {"pool_blocks", o.pool_blocks},
                        {"block_size", o.block_size},
                        {"rows", out}});
    return gpulab::kExitOk;
  }
  fmt::print(
      "== prefix caching: {:.0f}% of requests start with one of {} system prompts of {} tokens "
      "==\n",
      100 * s.workload.shared_fraction, s.workload.system_prompts, s.workload.system_tokens);
  Table t;
  t.column("policy", Table::Align::kLeft)
      .column("block hit rate")
      .column("prefill saved")
      .column("TTFT p50 hit (ms)")
      .column("TTFT p50 miss (ms)")
      .column("TTFT p99 (ms)")
      .column("TPOT p99 (ms)")
      .column("throughput (tok/s)")
      .column("goodput (tok/s)");
  for (const auto& r : rows) {
    const double hit_rate = r.kv.block_lookups ? 100.0 * static_cast<double>(r.kv.block_hits) /
                                                     static_cast<double>(r.kv.block_lookups)
                                               : 0;
    const double saved = r.m.prompt_tokens ? 100.0 * static_cast<double>(r.m.cached_tokens) /
                                                 static_cast<double>(r.m.prompt_tokens)
                                           : 0;
    t.row({r.name, fmt::format("{:.1f}%", hit_rate), fmt::format("{:.1f}%", saved),
           r.hit_ttft_p50 > 0 ? fmt::format("{:.0f}", r.hit_ttft_p50) : "-",
           fmt::format("{:.0f}", r.miss_ttft_p50), fmt::format("{:.0f}", r.m.ttft_p99),
           fmt::format("{:.1f}", r.m.tpot_p99), fmt::format("{:.0f}", r.m.throughput_tok_s),
           fmt::format("{:.0f}", r.m.goodput_tok_s)});
  }
  fmt::print("{}", t.render());
  fmt::print(
      "KV pool: {} blocks x {} tokens (paged-kv BlockAllocator + PrefixCache); user turn "
      "U{{{}..{}}} tokens\n",
      o.pool_blocks, o.block_size, s.workload.prompt_min, s.workload.prompt_max);
  fmt::print("{}\n", cost_line(s.cost));
  return gpulab::kExitOk;
}

// ---- extension: SLO-aware admission under overload -------------------------

int run_admission(Shared& s, double headroom) {
  validate_shared(s);
  if (!(headroom > 0 && headroom <= 1))
    throw gpulab::UsageError("--tpot-headroom must lie in (0, 1]");
  const auto reqs = generate(s.workload, s.common.seed);
  // The widest batch whose bare iteration leaves `headroom` of the TPOT SLO:
  // the rest is for the prefill steps that stall decodes.
  std::size_t feasible = 0;
  for (std::size_t b = 1; b <= s.max_batch; ++b)
    if (s.cost.iteration_ms(b) <= headroom * s.slo.tpot_ms) feasible = b;
  if (feasible == 0)
    throw gpulab::UsageError("no batch width meets the TPOT SLO with this cost model");

  struct Row {
    std::string name;
    std::size_t width;
    Metrics m;
  };
  std::vector<Row> rows;
  ServingMetrics sm;
  auto run = [&](std::string name, const std::string& slug, std::size_t width, bool shed) {
    ContinuousOptions c;
    c.max_batch = width;
    c.shed_late = shed;
    c.shed_ttft_ms = s.slo.ttft_ms;
    rows.push_back({std::move(name), width,
                    record(sm, slug, reqs, simulate_continuous(reqs, c, s.cost), s.slo)});
  };
  run("admit everything (FIFO)", "admit-all", s.max_batch, false);
  run(fmt::format("cap batch width (iteration <= {:.0f}% of TPOT SLO)", 100 * headroom),
      "cap-width", feasible, false);
  run("cap width + shed requests past their TTFT SLO", "cap-width-shed", feasible, true);
  write_metrics(s, sm);

  if (s.common.json) {
    Json out = Json::array();
    for (const auto& r : rows) {
      Json j = metrics_json(r.m);
      j["policy"] = r.name;
      j["max_batch"] = r.width;
      out.push_back(j);
    }
    gpulab::print_json({{"requests", reqs.size()},
                        {"rate_per_s", s.workload.rate_per_s},
                        {"seed", s.common.seed},
                        {"rows", out}});
    return gpulab::kExitOk;
  }
  fmt::print("== SLO-aware admission: {} req/s offered (SLO: TTFT<{}ms, TPOT<{}ms) ==\n",
             s.workload.rate_per_s, r0(s.slo.ttft_ms), r0(s.slo.tpot_ms));
  Table t;
  t.column("policy", Table::Align::kLeft)
      .column("max_batch")
      .column("served")
      .column("shed")
      .column("TTFT p99 (ms)")
      .column("TPOT p50 (ms)")
      .column("throughput (tok/s)")
      .column("goodput (tok/s)");
  for (const auto& r : rows)
    t.row({r.name, std::to_string(r.width), std::to_string(r.m.completed), std::to_string(r.m.shed),
           fmt::format("{:.0f}", r.m.ttft_p99), fmt::format("{:.1f}", r.m.tpot_p50),
           fmt::format("{:.0f}", r.m.throughput_tok_s), fmt::format("{:.0f}", r.m.goodput_tok_s)});
  fmt::print("{}", t.render());
  fmt::print("{}\n{}\n", workload_line(s, "", reqs.size()), cost_line(s.cost));
  return gpulab::kExitOk;
}

void add_workload_flags(CLI::App& app, Shared& s) {
  app.add_option("--rate", s.workload.rate_per_s, "Poisson arrival rate (requests/s)")
      ->capture_default_str();
  app.add_option("--requests", s.workload.requests, "Requests to simulate")->capture_default_str();
  app.add_option("--prompt-min", s.workload.prompt_min, "Shortest prompt (tokens)")
      ->capture_default_str();
  app.add_option("--prompt-max", s.workload.prompt_max, "Longest prompt (tokens)")
      ->capture_default_str();
  app.add_option("--output-min", s.workload.output_min, "Shortest output (tokens)")
      ->capture_default_str();
  app.add_option("--output-max", s.workload.output_max, "Longest output (tokens)")
      ->capture_default_str();
  app.add_option("--max-batch", s.max_batch, "Batch width (configured; sets the iteration time)")
      ->capture_default_str();
  app.add_option("--slo-ttft-ms", s.slo.ttft_ms, "TTFT SLO: met when TTFT < this")
      ->capture_default_str();
  app.add_option("--slo-tpot-ms", s.slo.tpot_ms, "TPOT SLO: met when TPOT < this")
      ->capture_default_str();
  app.add_option("--iter-base-ms", s.cost.iter_base_ms, "Iteration time at width 0 (ms)")
      ->capture_default_str();
  app.add_option("--iter-per-slot-ms", s.cost.iter_per_slot_ms,
                 "Iteration time per configured slot (ms)")
      ->capture_default_str();
  app.add_option("--prefill-ms-per-token", s.cost.prefill_ms_per_token,
                 "Prefill cost per prompt token (ms)")
      ->capture_default_str();
  app.add_option("--metrics-out", s.metrics_out,
                 "Also write each policy's TTFT/TPOT histograms and good/all request counts as "
                 "Prometheus text to FILE, atomically (for gpu-exporter --textfile-dir)");
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
  app.add_option("--trace", mo.trace,
                 "Replay a CSV trace (Azure TIMESTAMP,ContextTokens,GeneratedTokens or "
                 "arrival_ms,prompt_tokens,output_tokens) instead of the synthetic load");
  app.add_option("--depths", mo.depths, "Batch depths of the goodput sweep")
      ->delimiter(',')
      ->capture_default_str();
  app.add_option("--plot", mo.plot,
                 "Write throughput and goodput against batch depth to this SVG (gnuplot)");

  // Subcommands start from the same defaults and take the same workload flags.
  Shared si = s, sp = s, sa = s;
  si.workload.long_fraction = 0.2;
  si.workload.rate_per_s = 2.0;  // below saturation, so stalls rather than queueing dominate
  sp.workload.shared_fraction = 0.9;
  sp.workload.prompt_min = 32;
  sp.workload.prompt_max = 256;
  sa.workload.rate_per_s = 6;
  sa.max_batch = 32;

  InterferenceOptions io;
  auto* inter = app.add_subcommand("interference",
                                   "Long prompts stall decodes: whole-prompt vs chunked prefill vs "
                                   "prefill/decode disaggregation");
  gpulab::add_json_flag(*inter, si.common);
  gpulab::add_seed_flag(*inter, si.common);
  add_workload_flags(*inter, si);
  inter->add_option("--long-fraction", si.workload.long_fraction, "Fraction of long prompts")
      ->capture_default_str();
  inter->add_option("--long-min", si.workload.long_min, "Shortest long prompt (tokens)")
      ->capture_default_str();
  inter->add_option("--long-max", si.workload.long_max, "Longest long prompt (tokens)")
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
      ->add_option("--shared-fraction", sp.workload.shared_fraction,
                   "Fraction of requests with a system prompt")
      ->capture_default_str();
  prefix
      ->add_option("--system-prompts", sp.workload.system_prompts,
                   "Distinct system prompts (Zipf popularity)")
      ->capture_default_str();
  prefix->add_option("--system-tokens", sp.workload.system_tokens, "Tokens per system prompt")
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
    try {
      if (inter->parsed()) return run_interference(si, io);
      if (prefix->parsed()) return run_prefix(sp, po);
      if (admit->parsed()) return run_admission(sa, headroom);
      return run_main(s, mo);
    } catch (const std::invalid_argument& e) {
      throw gpulab::UsageError(e.what());
    }
  });
}
