#include "serving/demo.hpp"

#include <fmt/format.h>
#include <httplib.h>

#include <thread>

#include "gpulab/errors.hpp"
#include "gpulab/prom_text.hpp"
#include "serving/completions_api.hpp"
#include "serving/reference_decoder.hpp"

namespace serving {
namespace {

using gpulab::Json;

struct Session {
  httplib::Client client;
  const Model& model;
  bool all_pass = true;
  std::size_t checked = 0, passed = 0;

  // The reference decoder's greedy completion text of `prompt`.
  std::string reference_text(const std::string& prompt, std::size_t max_tokens) {
    ReferenceDecoder ref(model);
    SamplingParams p;
    p.max_tokens = max_tokens;
    const auto g = ref.generate(*encode(prompt), p);
    return completion_text(g.tokens, g.finish);
  }
  void check(const std::string& got, const std::string& want) {
    ++checked;
    if (got == want) ++passed;
    if (got != want) {
      all_pass = false;
      fmt::print("  FAIL reference decoder says {}\n", Json(want).dump());
    }
  }
  httplib::Result post(const Json& body) {
    fmt::print("POST /v1/completions {}\n", body.dump());
    return client.Post("/v1/completions", body.dump(), "application/json");
  }
};

std::string usage_line(const Json& u) {
  return fmt::format("usage: prompt {} + completion {} = {} tokens, {} cached", u["prompt_tokens"].get<int>(),
                     u["completion_tokens"].get<int>(), u["total_tokens"].get<int>(),
                     u["prompt_tokens_details"]["cached_tokens"].get<int>());
}

void completion(Session& s, const std::string& prompt, std::size_t max_tokens) {
  auto r = s.post({{"prompt", prompt}, {"max_tokens", max_tokens}, {"temperature", 0}});
  if (!r) throw gpulab::RunError(fmt::format("request failed: {}", httplib::to_string(r.error())));
  fmt::print("  {}", r->status);
  if (r->status != 200) {
    fmt::print(" {}", r->body);
    s.all_pass = false;
    return;
  }
  const Json j = Json::parse(r->body);
  const std::string text = j["choices"][0]["text"];
  fmt::print(" text {} finish_reason {}\n  {}\n", Json(text).dump(), j["choices"][0]["finish_reason"].get<std::string>(),
             usage_line(j["usage"]));
  s.check(text, s.reference_text(prompt, max_tokens));
}

void streamed(Session& s, const std::string& prompt, std::size_t max_tokens) {
  auto r = s.post({{"prompt", prompt}, {"max_tokens", max_tokens}, {"temperature", 0}, {"stream", true}});
  if (!r) throw gpulab::RunError(fmt::format("request failed: {}", httplib::to_string(r.error())));
  std::string text, finish;
  std::size_t events = 0;
  for (std::size_t at = 0; (at = r->body.find("data: ", at)) != std::string::npos;) {
    const auto end = r->body.find("\n\n", at);
    const std::string data = r->body.substr(at + 6, end - at - 6);
    at = end;
    ++events;
    if (data == "[DONE]") break;
    const Json chunk = Json::parse(data);
    text += chunk["choices"][0]["text"].get<std::string>();
    if (!chunk["choices"][0]["finish_reason"].is_null()) finish = chunk["choices"][0]["finish_reason"];
  }
  fmt::print("  {} {}: {} events (the last is [DONE]), text {} finish_reason {}\n", r->status,
             r->get_header_value("Content-Type"), events, Json(text).dump(), finish);
  s.check(text, s.reference_text(prompt, max_tokens));
}

}  // namespace

int run_demo(const ModelChoice& choice, const EngineOptions& engine_options) {
  const auto loaded = load_model(choice, engine_options);
  const ModelConfig& config = loaded->config;
  const Model& model = *loaded->model;
  Engine engine(model, engine_options);
  EngineLoop loop(engine);
  Server server(loop, config, ServerOptions{});
  const int port = server.bind({"127.0.0.1", 0});
  std::thread serving([&] { server.run(); });
  fmt::print("== gpulab-serve on 127.0.0.1 (a free port): {}, matmuls on {} ==\n", describe(config),
             model.backend().name());

  Session s{httplib::Client("127.0.0.1", port), model};
  s.client.set_read_timeout(300, 0);
  completion(s, "Hello", 8);
  streamed(s, "Hello, world", 6);
  // Two prompts sharing 40 characters: the second adopts the first one's full KV blocks.
  const std::string shared = "You are a helpful assistant. Be brief. ";
  completion(s, shared + "Q1", 4);
  completion(s, shared + "Q2", 4);

  auto bad = s.post({{"prompt", "x"}, {"max_tokens", 0}});
  fmt::print("  {} {}\n", bad->status, Json::parse(bad->body)["error"]["message"].get<std::string>());
  auto models = s.client.Get("/v1/models");
  fmt::print("GET /v1/models\n  {} {}\n", models->status, Json::parse(models->body)["data"][0].dump());

  auto metrics = s.client.Get("/metrics");
  fmt::print("GET /metrics (a selection)\n");
  auto parsed = gpulab::prom::parse(metrics->body);
  if (!parsed) throw gpulab::RunError("/metrics: " + parsed.error().message);
  for (const char* name : {"serving_requests_finished_total", "serving_generation_tokens_total",
                           "serving_prefill_tokens_total", "serving_prefix_cache_hits_total",
                           "serving_prefix_cache_lookups_total", "serving_prefix_cache_skipped_tokens_total",
                           "serving_preemptions_total", "serving_requests_running", "serving_requests_waiting",
                           "serving_kv_blocks_used"}) {
    const auto* f = parsed.value().find(name);
    fmt::print("  {} {}\n", name, f && f->find({}) ? gpulab::prom::format_value(f->find({})->value) : "missing");
  }
  const auto* ttft = parsed.value().find("serving_ttft_seconds");
  fmt::print("  serving_ttft_seconds_count {}\n", gpulab::prom::format_value(ttft->find({})->cumulative.back()));

  server.stop();
  serving.join();
  loop.stop();
  fmt::print("{} {} of {} completions equal the reference decoder's greedy tokens\n", s.all_pass ? "PASS" : "FAIL",
             s.passed, s.checked);
  return s.all_pass ? gpulab::kExitOk : gpulab::kExitCheckFailed;
}

}  // namespace serving
