#include "serving/load_generator.hpp"

#include <fmt/format.h>
#include <httplib.h>

#include <algorithm>
#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

#include "batching/trace.hpp"
#include "gpulab/errors.hpp"
#include "gpulab/json.hpp"
#include "gpulab/table.hpp"
#include "serving/completion_client.hpp"
#include "serving/server.hpp"
#include "serving/trace_workload.hpp"

namespace serving {
namespace {

using Clock = std::chrono::steady_clock;
using gpulab::Json;

struct Target {
  std::string host;
  int port = 0;
};

Target parse_url(const std::string& url) {
  const std::string scheme = "http://";
  if (url.rfind(scheme, 0) != 0) throw gpulab::UsageError(fmt::format("--url: expected http://HOST:PORT, got '{}'", url));
  std::string rest = url.substr(scheme.size());
  if (!rest.empty() && rest.back() == '/') rest.pop_back();
  try {
    const ListenAddress a = parse_listen(rest);
    if (a.port == 0) throw gpulab::UsageError("");
    return {a.host, a.port};
  } catch (const gpulab::UsageError&) {
    throw gpulab::UsageError(fmt::format("--url: expected http://HOST:PORT, got '{}'", url));
  }
}

struct Result {
  bool served = false, refused = false, failed = false;
  std::string error;
  double first_ms = 0, finish_ms = 0, worst_gap_ms = 0;
  std::uint32_t tokens = 0, cached = 0;
};

double ms_since(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

void one_request(const Target& t, const std::vector<TokenId>& prompt, std::uint32_t max_tokens, Clock::time_point t0,
                 Result& out) {
  double last = 0;
  const Json request = {{"prompt", prompt}, {"max_tokens", max_tokens}, {"temperature", 0}, {"stream", true}};
  const CompletionAnswer answer = complete(CompletionTarget{t.host, t.port, 30, 600}, request, [&](const Json& event) {
    Json j = event;  // operator[] on a missing key is null, not undefined behaviour
    const double now = ms_since(t0);
    if (out.tokens == 0)
      out.first_ms = now;
    else
      out.worst_gap_ms = std::max(out.worst_gap_ms, now - last);
    last = now;
    ++out.tokens;
    if (!j["choices"][0]["finish_reason"].is_null()) {
      out.finish_ms = now;
      out.cached = j["usage"]["prompt_tokens_details"]["cached_tokens"].get<std::uint32_t>();
    }
  });
  if (answer.status == 429) {
    out.refused = true;
  } else if (!answer.ok) {
    // A stream cut short (no finish_reason, no [DONE]) is a failure, never a short answer.
    out.failed = true;
    out.error = answer.error;
  } else {
    out.served = true;
  }
}

}  // namespace

int run_loadgen(const LoadOptions& o) {
  const Target target = parse_url(o.url);
  auto trace = batching::load_trace(o.trace);

  httplib::Client probe(target.host, target.port);
  probe.set_connection_timeout(10, 0);
  auto models = probe.Get("/v1/models");
  if (!models || models->status != 200)
    throw gpulab::RunError(fmt::format("cannot reach {}: {}", o.url,
                                       models ? fmt::format("HTTP {}", models->status) : httplib::to_string(models.error())));
  const auto context = Json::parse(models->body)["data"][0]["max_model_len"].get<std::uint32_t>();

  TraceWorkload w = shape_trace(std::move(trace), o.shaping, context, o.trace.c_str());
  auto& reqs = w.requests;
  const auto& prompts = w.prompts;
  const std::size_t clipped = w.clipped;

  std::vector<Result> results(reqs.size());
  std::vector<std::thread> threads;
  const auto t0 = Clock::now();
  for (std::size_t i = 0; i < reqs.size(); ++i) {
    std::this_thread::sleep_until(t0 + std::chrono::duration_cast<Clock::duration>(
                                           std::chrono::duration<double, std::milli>(reqs[i].arrival_ms)));
    threads.emplace_back(one_request, target, std::cref(prompts[i]), reqs[i].output_tokens, t0, std::ref(results[i]));
  }
  for (auto& t : threads) t.join();

  std::vector<batching::Outcome> outs(reqs.size());
  std::size_t refused = 0, failed = 0;
  std::string first_error;
  for (std::size_t i = 0; i < reqs.size(); ++i) {
    const Result& r = results[i];
    refused += r.refused;
    if (r.failed && failed++ == 0) first_error = r.error;
    outs[i] = {r.served, r.first_ms, r.finish_ms, r.worst_gap_ms, r.cached};
    if (r.served) reqs[i].output_tokens = r.tokens;
  }
  const batching::Metrics m = batching::summarize(reqs, outs, o.slo);
  if (o.json) {
    gpulab::print_json({{"requests", m.requests},     {"completed", m.completed},
                        {"refused_429", refused},     {"failed", failed},
                        {"clipped", clipped},         {"ttft_p50_ms", m.ttft_p50},
                        {"ttft_p99_ms", m.ttft_p99},  {"tpot_p50_ms", m.tpot_p50},
                        {"tpot_p99_ms", m.tpot_p99},  {"throughput_tok_s", m.throughput_tok_s},
                        {"goodput_tok_s", m.goodput_tok_s}, {"slo_met", m.slo_met},
                        {"cached_tokens", m.cached_tokens}});
  } else {
    fmt::print("{} requests from {} at {}x speed against {} ({} clipped to the model's context of {}"
               " or --max-output), {}-token shared prefix\n",
               m.requests, o.trace, o.shaping.speed, o.url, clipped, context, o.shaping.shared_prefix);
    gpulab::Table t;
    for (const char* h : {"completed", "429", "failed", "ttft_p50_ms", "ttft_p99_ms", "tpot_p50_ms", "tpot_p99_ms",
                          "tok/s", "goodput_tok/s", "slo_met", "cached_tok"})
      t.column(h);
    t.row({std::to_string(m.completed), std::to_string(refused), std::to_string(failed),
           fmt::format("{:.1f}", m.ttft_p50), fmt::format("{:.1f}", m.ttft_p99), fmt::format("{:.1f}", m.tpot_p50),
           fmt::format("{:.1f}", m.tpot_p99), fmt::format("{:.1f}", m.throughput_tok_s),
           fmt::format("{:.1f}", m.goodput_tok_s), std::to_string(m.slo_met), std::to_string(m.cached_tokens)});
    fmt::print("{}", t.render());
    fmt::print("SLO: TTFT < {} ms and TPOT < {} ms\n", o.slo.ttft_ms, o.slo.tpot_ms);
  }
  if (failed > 0) {
    fmt::print(stderr, "gpulab-serve loadgen: {} requests failed; the first: {}\n", failed, first_error);
    return gpulab::kExitCheckFailed;
  }
  return gpulab::kExitOk;
}

}  // namespace serving
