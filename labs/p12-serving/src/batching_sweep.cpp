#include "serving/batching_sweep.hpp"

#include <fmt/format.h>

#include <cmath>
#include <map>
#include <stdexcept>

#include "batching/metrics.hpp"
#include "batching/trace.hpp"
#include "gpulab/errors.hpp"
#include "gpulab/json.hpp"
#include "gpulab/table.hpp"
#include "serving/trace_replay.hpp"

namespace serving {

RateSearch search_rate(const std::function<double(double)>& p99_at, double target, double lo_speed,
                       double hi_speed, std::size_t refine) {
  if (!(lo_speed > 0 && lo_speed <= hi_speed && std::isfinite(hi_speed)))
    throw std::invalid_argument("speeds must satisfy 0 < --min-speed <= --max-speed");
  RateSearch r;
  auto probe = [&](double speed) {
    const double p99 = p99_at(speed);
    r.probes.push_back({speed, p99, p99 <= target});
    return p99 <= target;
  };
  std::optional<double> fail;
  for (double s = lo_speed;; s = std::min(2 * s, hi_speed)) {
    if (!probe(s)) {
      fail = s;
      break;
    }
    r.highest = s;
    if (s >= hi_speed) break;
  }
  if (!fail) {
    r.capped = true;
    return r;
  }
  if (!r.highest) return r;
  double ok = *r.highest, bad = *fail;
  for (std::size_t i = 0; i < refine; ++i) {
    const double mid = std::sqrt(ok * bad);
    if (probe(mid))
      ok = mid;
    else
      bad = mid;
  }
  r.highest = ok;
  return r;
}

namespace {

struct ModeResult {
  RateSearch search;
  std::map<double, batching::Metrics> runs;  // by speed
};

// Requests per second the trace offers at `speed`: arrivals over the span of the arrivals.
double offered_rate(const TraceWorkload& w) {
  const auto& r = w.requests;
  const double span = r.back().arrival_ms - r.front().arrival_ms;
  return span > 0 ? static_cast<double>(r.size() - 1) / span * 1000.0 : 0.0;
}

}  // namespace

int run_batching_sweep(const SweepOptions& o) {
  if (!(o.ttft_p99_ms > 0)) throw gpulab::UsageError("--ttft-p99-ms must be > 0");
  if (!(o.min_speed > 0 && o.min_speed <= o.max_speed))
    throw gpulab::UsageError("--min-speed must be > 0 and at most --max-speed");
  auto loaded = load_model(o.choice, o.engine);
  const auto trace = batching::load_trace(o.trace);
  const std::size_t context = loaded->config.max_context;
  batching::Slo slo;  // goodput is not reported here; summarize needs one
  slo.ttft_ms = o.ttft_p99_ms;

  auto workload_at = [&](double speed) {
    TraceShaping s = o.shaping;
    s.speed = speed;
    return shape_trace(trace, s, context, o.trace.c_str());
  };
  const TraceWorkload base = workload_at(1);
  ModeResult modes[2];
  for (const bool is_static : {false, true}) {
    ModeResult& m = modes[is_static ? 1 : 0];
    EngineOptions eo = o.engine;
    eo.static_batching = is_static;
    m.search = search_rate(
        [&](double speed) {
          const TraceWorkload w = workload_at(speed);
          Engine engine(*loaded->model, eo);
          const ReplayResult run = replay_trace(engine, w);
          const batching::Metrics met = batching::summarize(w.requests, run.outcomes, slo);
          m.runs[speed] = met;
          return met.ttft_p99;
        },
        o.ttft_p99_ms, o.min_speed, o.max_speed, o.refine);
  }
  auto best = [&](const ModeResult& m) -> const batching::Metrics* {
    return m.search.highest ? &m.runs.at(*m.search.highest) : nullptr;
  };
  const batching::Metrics* cont = best(modes[0]);
  const batching::Metrics* stat = best(modes[1]);
  const bool have_ratio = cont && stat && stat->throughput_tok_s > 0;
  const double ratio = have_ratio ? cont->throughput_tok_s / stat->throughput_tok_s : 0.0;
  const double rate_per_speed = offered_rate(base);
  const char* names[2] = {"continuous", "static"};

  if (o.json) {
    gpulab::Json j = {{"model", describe(loaded->config)},
                      {"backend", std::string(loaded->model->backend().name())},
                      {"requests", base.requests.size()},
                      {"ttft_p99_target_ms", o.ttft_p99_ms}};
    for (int k = 0; k < 2; ++k) {
      gpulab::Json probes = gpulab::Json::array();
      for (const RateProbe& p : modes[k].search.probes) {
        const auto& met = modes[k].runs.at(p.speed);
        probes.push_back({{"speed", p.speed},
                          {"offered_req_s", p.speed * rate_per_speed},
                          {"ttft_p99_ms", p.p99_ttft_ms},
                          {"throughput_tok_s", met.throughput_tok_s},
                          {"sustained", p.sustained}});
      }
      const batching::Metrics* b = best(modes[k]);
      j[names[k]] = {{"probes", probes},
                     {"highest_speed",
                      modes[k].search.highest ? gpulab::Json(*modes[k].search.highest) : nullptr},
                     {"capped", modes[k].search.capped},
                     {"throughput_tok_s", b ? gpulab::Json(b->throughput_tok_s) : nullptr}};
    }
    j["rate_ratio"] = have_ratio ? gpulab::Json(*modes[0].search.highest / *modes[1].search.highest)
                                 : gpulab::Json(nullptr);
    j["throughput_ratio"] = have_ratio ? gpulab::Json(ratio) : gpulab::Json(nullptr);
    gpulab::print_json(j);
    return gpulab::kExitOk;
  }

  fmt::print("model:  {}, matmuls on {}\n", describe(loaded->config),
             loaded->model->backend().name());
  fmt::print("trace:  {} requests of {} ({} clipped), {:.2f} req/s at 1x; p99 TTFT target {} ms\n",
             base.requests.size(), o.trace, base.clipped, rate_per_speed, o.ttft_p99_ms);
  gpulab::Table t;
  t.column("batching", gpulab::Table::Align::kLeft);
  for (const char* h : {"speed", "req/s", "ttft_p50_ms", "ttft_p99_ms", "tok/s"}) t.column(h);
  t.column("held", gpulab::Table::Align::kLeft);
  for (int k = 0; k < 2; ++k)
    for (const RateProbe& p : modes[k].search.probes) {
      const auto& met = modes[k].runs.at(p.speed);
      t.row({names[k], fmt::format("{:.2f}", p.speed),
             fmt::format("{:.2f}", p.speed * rate_per_speed), fmt::format("{:.1f}", met.ttft_p50),
             fmt::format("{:.1f}", p.p99_ttft_ms), fmt::format("{:.1f}", met.throughput_tok_s),
             p.sustained ? "yes" : "no"});
    }
  fmt::print("{}", t.render());
  for (int k = 0; k < 2; ++k) {
    const auto& s = modes[k].search;
    if (s.highest)
      fmt::print("{:<10}  sustains {}{:.2f} req/s ({:.2f}x): {:.1f} tok/s\n", names[k],
                 s.capped ? ">= " : "", *s.highest * rate_per_speed, *s.highest,
                 best(modes[k])->throughput_tok_s);
    else
      fmt::print("{:<10}  misses the target even at {:.2f}x\n", names[k], o.min_speed);
  }
  if (have_ratio)
    fmt::print(
        "continuous / static at p99 TTFT <= {} ms: {:.2f}x the arrival rate, {:.2f}x the "
        "throughput{}\n",
        o.ttft_p99_ms, *modes[0].search.highest / *modes[1].search.highest, ratio,
        modes[0].search.capped || modes[1].search.capped
            ? " (a mode held at --max-speed: its limit may be higher)"
            : "");
  else
    fmt::print("no ratio: a mode missed the target at every speed tried (lower --min-speed)\n");
  return gpulab::kExitOk;
}

}  // namespace serving
