#include "batching/scenarios.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <memory>
#include <string_view>
#include <utility>

#include "batching/continuous_batching.hpp"
#include "batching/disaggregation.hpp"
#include "batching/static_batching.hpp"
#include "batching/trace.hpp"
#include "gpulab/errors.hpp"
#include "gpulab/progress.hpp"
#include "gpulab/stats.hpp"
#include "gpulab/table.hpp"
#include "paged_kv/kv_math.hpp"

namespace batching {

using gpulab::Json;
using gpulab::Table;

namespace {

// summarize(), and the run's requests into --metrics-out's families under `policy`.
Metrics record(ServingMetrics& sm, const std::string& policy, const std::vector<Request>& reqs,
               const std::vector<Outcome>& outs, const Slo& slo) {
  sm.add_run(policy, reqs, outs, slo);
  return summarize(reqs, outs, slo);
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

std::string workload_line(const ServerSetup& s, const std::string& trace, std::size_t n) {
  if (!trace.empty()) return fmt::format("workload: {} requests replayed from {}", n, trace);
  const auto& w = s.workload;
  return fmt::format(
             "workload: {} requests, Poisson {} req/s, prompt U{{{}..{}}}, output U{{{}..{}}} "
             "tokens, "
             "seed {}",
             w.requests, w.rate_per_s, w.prompt_min, w.prompt_max, w.output_min, w.output_max,
             s.seed) +
         (w.shared_fraction > 0
              ? fmt::format("; {:.0f}% start with one of {} system prompts of {} tokens",
                            100 * w.shared_fraction, w.system_prompts, w.system_tokens)
              : "");
}

std::string cost_line(const CostModel& c, bool separate_prefill = true) {
  return fmt::format("model: iteration = {} + {} x max_batch ms; prefill {} ms/token{}",
                     c.iter_base_ms, c.iter_per_slot_ms, c.prefill_ms_per_token,
                     separate_prefill ? ", a separate step that stalls decodes" : "");
}

}  // namespace

void validate(const ServerSetup& s) {
  validate(s.workload);
  validate(s.cost);
  if (s.max_batch == 0 || s.max_batch > 100'000)
    throw gpulab::UsageError("--max-batch must be in 1..100000");
  if (!(s.slo.ttft_ms > 0) || !(s.slo.tpot_ms > 0)) throw gpulab::UsageError("SLOs must be > 0 ms");
}

// ---- the default run ----

MainReport run_main(const ServerSetup& s, const MainOptions& o) {
  validate(s);
  for (const auto d : o.depths)
    if (d == 0 || d > 100'000) throw gpulab::UsageError("--depths entries must be in 1..100000");
  if (o.kv_blocks > 0 && (o.block_size == 0 || o.kv_blocks > (std::size_t{1} << 28) / o.block_size))
    throw gpulab::UsageError(
        "--block-size must be >= 1 and --kv-blocks x --block-size at most 2^28 tokens");
  if (o.prefix_cache && o.kv_blocks == 0)
    throw gpulab::UsageError("--prefix-cache needs --kv-blocks (the cache lives in the KV pool)");
  const std::vector<Request> reqs =
      o.trace.empty() ? generate(s.workload, s.seed) : load_trace(o.trace);
  MainReport r;
  r.setup = s;
  r.options = o;
  r.requests = reqs.size();
  ContinuousOptions copt;
  {
    // Progress on stderr, only on a terminal, cleared before the tables print.
    gpulab::Progress progress("simulating", 2 + o.depths.size());
    copt.max_batch = s.max_batch;
    r.stat = record(r.serving, "static", reqs, simulate_static(reqs, s.max_batch, s.cost), s.slo);
    progress.update(1);
    // Each continuous run starts from an empty pool of its own.
    auto engine_kv = [&] {
      return o.kv_blocks > 0 ? std::make_unique<EngineKv>(o.kv_blocks, o.block_size, o.prefix_cache)
                             : nullptr;
    };
    auto kv = engine_kv();
    copt.engine_kv = kv.get();
    r.cont = record(r.serving, "continuous", reqs, simulate_continuous(reqs, copt, s.cost), s.slo);
    if (kv) r.cont_kv = kv->stats();
    progress.update(2);
    for (const std::size_t d : o.depths) {
      copt.max_batch = d;
      kv = engine_kv();
      copt.engine_kv = kv.get();
      r.sweep.push_back(summarize(reqs, simulate_continuous(reqs, copt, s.cost), s.slo));
      progress.update(2 + r.sweep.size());
    }
  }
  for (std::size_t i = 1; i < r.sweep.size(); ++i)
    if (r.sweep[i].goodput_tok_s > r.sweep[r.best].goodput_tok_s) r.best = i;
  r.thru_gain = r.stat.throughput_tok_s > 0 ? r.cont.throughput_tok_s / r.stat.throughput_tok_s : 0;
  r.ttft_gain = r.cont.ttft_p99 > 0 ? r.stat.ttft_p99 / r.cont.ttft_p99 : 0;
  return r;
}

std::string render(const MainReport& r) {
  const ServerSetup& s = r.setup;
  const MainOptions& o = r.options;
  // Why each depth reaches the goodput it does.
  auto annotate = [&](std::size_t i) -> std::string {
    const double iter = s.cost.iteration_ms(o.depths[i]);
    const Metrics& m = r.sweep[i];
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
  std::string out;
  auto put = std::back_inserter(out);
  fmt::format_to(put, "== static vs continuous batching ({}) ==\n",
                 o.trace.empty() ? "Poisson load" : "trace replay");
  fmt::format_to(put, "{:<12}{:>12}{:>10}{:>10}{:>10}{:>10}\n", "policy", "thru(tok/s)", "p50_TTFT",
                 "p99_TTFT", "p50_TPOT", "completed");
  for (const auto& [name, m] : {std::pair{"static", &r.stat}, std::pair{"continuous", &r.cont}})
    fmt::format_to(put, "{:<12}{:>12}{:>10}{:>10}{:>10}{:>10}\n", name, r0(m->throughput_tok_s),
                   r0(m->ttft_p50), r0(m->ttft_p99), r0(m->tpot_p50), m->completed);
  fmt::format_to(put, "  -> continuous: {:.1f}x throughput, {}x lower p99 TTFT\n", r.thru_gain,
                 r0(r.ttft_gain));
  fmt::format_to(put, "\n== goodput vs batch depth (SLO: TTFT<{}ms, TPOT<{}ms) ==\n",
                 r0(s.slo.ttft_ms), r0(s.slo.tpot_ms));
  fmt::format_to(put, "{:>10}{:>12}{:>10}\n", "max_batch", "throughput", "goodput");
  for (std::size_t i = 0; i < r.sweep.size(); ++i)
    fmt::format_to(put, "{:>10}{:>12}{:>10}   {}\n", o.depths[i], r0(r.sweep[i].throughput_tok_s),
                   r0(r.sweep[i].goodput_tok_s), annotate(i));
  if (!r.sweep.empty()) fmt::format_to(put, "goodput-optimal batch depth: {}\n", o.depths[r.best]);

  fmt::format_to(put, "\n== latency detail (max_batch {}; all times in ms, rates in tok/s) ==\n",
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
  for (const auto& [name, m] : {std::pair{"static", &r.stat}, std::pair{"continuous", &r.cont}})
    t.row({name, fmt::format("{:.0f}", m->ttft_p50), fmt::format("{:.0f}", m->ttft_p99),
           fmt::format("{:.1f}", m->tpot_p50), fmt::format("{:.1f}", m->tpot_p99),
           fmt::format("{:.0f}", m->e2e_p50), fmt::format("{:.0f}", m->e2e_p99),
           fmt::format("{:.0f}", m->goodput_tok_s), fmt::format("{}/{}", m->slo_met, m->requests)});
  out += t.render();
  fmt::format_to(put, "{}\n{}\n", workload_line(s, o.trace, r.requests), cost_line(s.cost));
  if (o.kv_blocks > 0) {
    const EngineKvStats& k = r.cont_kv;
    fmt::format_to(put,
                   "kv: continuous runs page KV as the serving engine does ({} blocks x {} tokens, "
                   "prefix cache {}; static: unlimited)\n",
                   o.kv_blocks, o.block_size, o.prefix_cache ? "on" : "off");
    fmt::format_to(put,
                   "kv (continuous, max_batch {}): {} preemptions, {} of {} prompt blocks hit, {} "
                   "prefill tokens skipped\n",
                   s.max_batch, k.preemptions, k.block_hits, k.block_lookups, k.skipped_tokens);
  }
  return out;
}

Json to_json(const MainReport& r) {
  const ServerSetup& s = r.setup;
  const MainOptions& o = r.options;
  Json rows = Json::array();
  for (std::size_t i = 0; i < r.sweep.size(); ++i) {
    Json row = metrics_json(r.sweep[i]);
    row["max_batch"] = o.depths[i];
    row["iteration_ms"] = s.cost.iteration_ms(o.depths[i]);
    rows.push_back(row);
  }
  Json doc = {{"requests", r.requests},
              {"seed", s.seed},
              {"trace", o.trace},
              {"max_batch", s.max_batch},
              {"slo", {{"ttft_ms", s.slo.ttft_ms}, {"tpot_ms", s.slo.tpot_ms}}},
              {"static", metrics_json(r.stat)},
              {"continuous", metrics_json(r.cont)},
              {"throughput_gain", r.thru_gain},
              {"p99_ttft_gain", r.ttft_gain},
              {"sweep", rows}};
  doc["goodput_optimal_max_batch"] = r.sweep.empty() ? Json() : Json(o.depths[r.best]);
  if (o.kv_blocks > 0)
    doc["engine_kv"] = {{"kv_blocks", o.kv_blocks},
                        {"block_size", o.block_size},
                        {"prefix_cache", o.prefix_cache},
                        {"preemptions", r.cont_kv.preemptions},
                        {"block_lookups", r.cont_kv.block_lookups},
                        {"block_hits", r.cont_kv.block_hits},
                        {"skipped_tokens", r.cont_kv.skipped_tokens}};
  return doc;
}

gpulab::PlotSpec goodput_plot(const MainReport& r) {
  gpulab::PlotSpec spec{"Continuous batching: throughput and goodput vs batch depth",
                        "max_batch",
                        "tokens/s",
                        true,
                        false,
                        {}};
  gpulab::PlotSeries thru{"throughput", {}, {}, false},
      good{"goodput (both SLOs met)", {}, {}, false};
  for (std::size_t i = 0; i < r.sweep.size(); ++i) {
    thru.x.push_back(static_cast<double>(r.options.depths[i]));
    thru.y.push_back(r.sweep[i].throughput_tok_s);
    good.x.push_back(static_cast<double>(r.options.depths[i]));
    good.y.push_back(r.sweep[i].goodput_tok_s);
  }
  spec.series = {thru, good};
  return spec;
}

// ---- interference ----

InterferenceReport run_interference(const ServerSetup& s, const InterferenceOptions& o) {
  validate(s);
  if (o.chunk == 0) throw gpulab::UsageError("--chunk must be at least 1 token");
  if (!(o.nvlink_gbs > 0) || !(o.ib_gbs > 0))
    throw gpulab::UsageError("link bandwidths must be > 0 GB/s");
  const auto model = paged_kv::find_model(o.model);
  if (!model)
    throw gpulab::UsageError(
        fmt::format("unknown model '{}' (see paged-kv kv-math --help)", o.model));
  InterferenceReport r;
  r.setup = s;
  r.options = o;
  r.kv_per_token = paged_kv::kv_bytes_per_token(*model);
  const auto reqs = generate(s.workload, s.seed);
  r.requests = reqs.size();
  ContinuousOptions copt;
  copt.max_batch = s.max_batch;
  r.rows.push_back(
      {"colocated, whole-prompt prefill", 1,
       record(r.serving, "colocated", reqs, simulate_continuous(reqs, copt, s.cost), s.slo)});
  copt.prefill_chunk = o.chunk;
  r.rows.push_back(
      {fmt::format("colocated, chunked prefill ({} tok)", o.chunk), 1,
       record(r.serving, "chunked-prefill", reqs, simulate_continuous(reqs, copt, s.cost), s.slo)});
  for (const auto& [label, gbs] :
       {std::pair{"NVLink", o.nvlink_gbs}, std::pair{"InfiniBand", o.ib_gbs}}) {
    DisaggOptions d{s.max_batch, r.kv_per_token, gbs};
    std::vector<double> h;
    for (const auto& q : reqs) h.push_back(handoff_ms(d, q.prompt_tokens));
    std::nth_element(h.begin(), h.begin() + static_cast<std::ptrdiff_t>(h.size() / 2), h.end());
    r.rows.push_back({fmt::format("disaggregated, KV over {} {} GB/s", label, gbs), 2,
                      record(r.serving,
                             fmt::format("disaggregated-{}",
                                         label == std::string_view("NVLink") ? "nvlink" : "ib"),
                             reqs, simulate_disaggregated(reqs, d, s.cost), s.slo),
                      h.empty() ? 0 : h[h.size() / 2]});
  }
  return r;
}

std::string render(const InterferenceReport& r) {
  const ServerSetup& s = r.setup;
  std::string out;
  auto put = std::back_inserter(out);
  fmt::format_to(
      put,
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
  for (const auto& row : r.rows)
    t.row({row.name, std::to_string(row.gpus), fmt::format("{:.0f}", row.m.ttft_p50),
           fmt::format("{:.0f}", row.m.ttft_p99), fmt::format("{:.1f}", row.m.tpot_p99),
           fmt::format("{:.0f}", row.m.worst_gap_p99),
           row.gpus > 1 ? fmt::format("{:.2f}", row.handoff_p50_ms) : "-",
           fmt::format("{:.0f}", row.m.goodput_tok_s),
           fmt::format("{:.0f}", row.m.goodput_tok_s / row.gpus)});
  out += t.render();
  fmt::format_to(
      put,
      "KV hand-off = {} B/token ({}) x prompt tokens / link bandwidth; SLO: TTFT<{}ms, TPOT<{}ms\n",
      r.kv_per_token, r.options.model, r0(s.slo.ttft_ms), r0(s.slo.tpot_ms));
  fmt::format_to(put, "{}\n{}\n", workload_line(s, "", r.requests), cost_line(s.cost, false));
  return out;
}

Json to_json(const InterferenceReport& r) {
  Json out = Json::array();
  for (const auto& row : r.rows) {
    Json j = metrics_json(row.m);
    j["policy"] = row.name;
    j["gpus"] = row.gpus;
    j["handoff_p50_ms"] = row.handoff_p50_ms;
    out.push_back(j);
  }
  return {{"requests", r.requests},
          {"seed", r.setup.seed},
          {"long_fraction", r.setup.workload.long_fraction},
          {"model", r.options.model},
          {"kv_bytes_per_token", r.kv_per_token},
          {"rows", out}};
}

// ---- prefix-cache ----

PrefixReport run_prefix(const ServerSetup& s, const PrefixOptions& o) {
  validate(s);
  if (o.pool_blocks == 0 || o.block_size == 0)
    throw gpulab::UsageError("--pool-blocks and --block-size must be >= 1");
  if (o.pool_blocks * o.block_size > (std::size_t{1} << 28))
    throw gpulab::UsageError("--pool-blocks x --block-size must be at most 2^28 tokens");
  const auto reqs = generate(s.workload, s.seed);
  PrefixReport r;
  r.setup = s;
  r.options = o;
  r.requests = reqs.size();
  for (const bool caching : {false, true}) {
    PagedPrefixKv kv(o.pool_blocks, o.block_size, caching);
    ContinuousOptions copt;
    copt.max_batch = s.max_batch;
    copt.kv = &kv;
    const auto outs = simulate_continuous(reqs, copt, s.cost);
    const std::string slug = caching ? "prefix-cache" : "no-prefix-cache";
    PrefixRow row{caching ? "paged KV + automatic prefix cache" : "paged KV, no prefix cache",
                  record(r.serving, slug, reqs, outs, s.slo), kv.stats()};
    r.serving.add_prefix_cache(slug, row.kv);
    std::vector<double> hit, miss;
    for (std::size_t i = 0; i < reqs.size(); ++i)
      if (outs[i].served)
        (outs[i].cached_tokens > 0 ? hit : miss).push_back(ttft_ms(reqs[i], outs[i]));
    row.hit_ttft_p50 = hit.empty() ? 0 : gpulab::percentile(hit, 50);
    row.miss_ttft_p50 = miss.empty() ? 0 : gpulab::percentile(miss, 50);
    r.rows.push_back(row);
  }
  return r;
}

std::string render(const PrefixReport& r) {
  const WorkloadSpec& w = r.setup.workload;
  std::string out;
  auto put = std::back_inserter(out);
  fmt::format_to(
      put,
      "== prefix caching: {:.0f}% of requests start with one of {} system prompts of {} tokens "
      "==\n",
      100 * w.shared_fraction, w.system_prompts, w.system_tokens);
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
  for (const auto& row : r.rows) {
    const double hit_rate = row.kv.block_lookups ? 100.0 * static_cast<double>(row.kv.block_hits) /
                                                       static_cast<double>(row.kv.block_lookups)
                                                 : 0;
    const double saved = row.m.prompt_tokens ? 100.0 * static_cast<double>(row.m.cached_tokens) /
                                                   static_cast<double>(row.m.prompt_tokens)
                                             : 0;
    t.row({row.name, fmt::format("{:.1f}%", hit_rate), fmt::format("{:.1f}%", saved),
           row.hit_ttft_p50 > 0 ? fmt::format("{:.0f}", row.hit_ttft_p50) : "-",
           fmt::format("{:.0f}", row.miss_ttft_p50), fmt::format("{:.0f}", row.m.ttft_p99),
           fmt::format("{:.1f}", row.m.tpot_p99), fmt::format("{:.0f}", row.m.throughput_tok_s),
           fmt::format("{:.0f}", row.m.goodput_tok_s)});
  }
  out += t.render();
  fmt::format_to(put,
                 "KV pool: {} blocks x {} tokens (paged-kv BlockAllocator + PrefixCache); user "
                 "turn U{{{}..{}}} tokens\n",
                 r.options.pool_blocks, r.options.block_size, w.prompt_min, w.prompt_max);
  fmt::format_to(put, "{}\n", cost_line(r.setup.cost));
  return out;
}

Json to_json(const PrefixReport& r) {
  Json out = Json::array();
  for (const auto& row : r.rows) {
    Json j = metrics_json(row.m);
    j["policy"] = row.name;
    j["block_lookups"] = row.kv.block_lookups;
    j["block_hits"] = row.kv.block_hits;
    j["evictions"] = row.kv.evictions;
    j["prompt_tokens"] = row.m.prompt_tokens;
    j["cached_tokens"] = row.m.cached_tokens;
    j["ttft_p50_hit_ms"] = row.hit_ttft_p50;
    j["ttft_p50_miss_ms"] = row.miss_ttft_p50;
    out.push_back(j);
  }
  return {{"requests", r.requests},
          {"seed", r.setup.seed},
          {"pool_blocks", r.options.pool_blocks},
          {"block_size", r.options.block_size},
          {"rows", out}};
}

// ---- admission ----

AdmissionReport run_admission(const ServerSetup& s, double headroom) {
  validate(s);
  if (!(headroom > 0 && headroom <= 1))
    throw gpulab::UsageError("--tpot-headroom must lie in (0, 1]");
  const auto reqs = generate(s.workload, s.seed);
  // The widest batch whose bare iteration leaves `headroom` of the TPOT SLO:
  // the rest is for the prefill steps that stall decodes.
  std::size_t feasible = 0;
  for (std::size_t b = 1; b <= s.max_batch; ++b)
    if (s.cost.iteration_ms(b) <= headroom * s.slo.tpot_ms) feasible = b;
  if (feasible == 0)
    throw gpulab::UsageError("no batch width meets the TPOT SLO with this cost model");
  AdmissionReport r;
  r.setup = s;
  r.requests = reqs.size();
  auto run = [&](std::string name, const std::string& slug, std::size_t width, bool shed) {
    ContinuousOptions c;
    c.max_batch = width;
    c.shed_late = shed;
    c.shed_ttft_ms = s.slo.ttft_ms;
    r.rows.push_back({std::move(name), width,
                      record(r.serving, slug, reqs, simulate_continuous(reqs, c, s.cost), s.slo)});
  };
  run("admit everything (FIFO)", "admit-all", s.max_batch, false);
  run(fmt::format("cap batch width (iteration <= {:.0f}% of TPOT SLO)", 100 * headroom),
      "cap-width", feasible, false);
  run("cap width + shed requests past their TTFT SLO", "cap-width-shed", feasible, true);
  return r;
}

std::string render(const AdmissionReport& r) {
  const ServerSetup& s = r.setup;
  std::string out =
      fmt::format("== SLO-aware admission: {} req/s offered (SLO: TTFT<{}ms, TPOT<{}ms) ==\n",
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
  for (const auto& row : r.rows)
    t.row({row.name, std::to_string(row.width), std::to_string(row.m.completed),
           std::to_string(row.m.shed), fmt::format("{:.0f}", row.m.ttft_p99),
           fmt::format("{:.1f}", row.m.tpot_p50), fmt::format("{:.0f}", row.m.throughput_tok_s),
           fmt::format("{:.0f}", row.m.goodput_tok_s)});
  out += t.render();
  out += fmt::format("{}\n{}\n", workload_line(s, "", r.requests), cost_line(s.cost));
  return out;
}

Json to_json(const AdmissionReport& r) {
  Json out = Json::array();
  for (const auto& row : r.rows) {
    Json j = metrics_json(row.m);
    j["policy"] = row.name;
    j["max_batch"] = row.width;
    out.push_back(j);
  }
  return {{"requests", r.requests},
          {"rate_per_s", r.setup.workload.rate_per_s},
          {"seed", r.setup.seed},
          {"rows", out}};
}

}  // namespace batching
