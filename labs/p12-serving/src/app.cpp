#include "serving/app.hpp"

#include <fmt/format.h>
#include <pthread.h>
#include <signal.h>

#include <chrono>
#include <memory>
#include <thread>

#include "gpulab/errors.hpp"
#include "gpulab/output_file.hpp"
#include "gpulab/rng.hpp"
#include "gpulab/table.hpp"
#include "serving/completions_api.hpp"
#include "serving/reference_decoder.hpp"

namespace serving {

int run_serve(const ServeOptions& options) {
  // Before any thread: every thread inherits the mask, and one waits for the signals.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  const ListenAddress address = parse_listen(options.listen);
  auto loaded = load_model(options.choice, options.engine);
  Engine engine(*loaded->model, options.engine);
  EngineLoop loop(engine);
  ServerOptions server_options = options.server;
  if (server_options.threads == 0)
    server_options.threads = options.engine.max_running + options.engine.max_waiting + 4;
  Server server(loop, loaded->config, server_options);
  const int port = server.bind(address);
  const std::string url = fmt::format("http://{}:{}", address.host, port);
  std::thread waiter([&] {
    int sig = 0;
    sigwait(&signals, &sig);
    server.stop();
  });
  fmt::print(stderr, "gpulab-serve: serving {} on {} ({}), {} KV blocks of {} tokens\n", describe(loaded->config),
             url, loaded->model->backend().name(), options.engine.kv_blocks, options.engine.block_size);
  if (!options.ready_file.empty())
    if (auto w = gpulab::write_file(options.ready_file, url + "\n"); !w)
      throw gpulab::UsageError("--ready-file: " + w.error().message);
  server.run();
  loop.stop();
  pthread_kill(waiter.native_handle(), SIGTERM);  // the waiter is still in sigwait when run() ended otherwise
  waiter.join();
  return gpulab::kExitOk;
}

int run_generate(const GenerateOptions& o) {
  auto loaded = load_model(o.choice, o.engine);
  std::vector<TokenId> prompt = o.prompt_ids;
  if (!o.prompt.empty()) {
    auto ids = encode(o.prompt);
    if (!ids)
      throw gpulab::UsageError(fmt::format("--prompt: byte {} is not ASCII", first_non_ascii(o.prompt)));
    prompt = *ids;
  }
  Engine engine(*loaded->model, o.engine);
  Refusal why;
  auto id = engine.submit(prompt, o.params, &why);
  if (!id) throw gpulab::UsageError(fmt::format("--{}", why.message));
  Generation got;
  std::size_t cached = 0;
  while (!engine.idle())
    for (const auto& e : engine.step()) {
      if (e.token) got.tokens.push_back(*e.token);
      if (e.finish) got.finish = *e.finish;
      cached = e.cached_tokens;
    }
  bool same = true;
  if (o.check) {
    ReferenceDecoder ref(*loaded->model);
    const Generation want = ref.generate(prompt, o.params);
    same = want.tokens == got.tokens && want.finish == got.finish;
  }
  const std::string text = completion_text(got.tokens, got.finish);
  if (o.json) {
    gpulab::Json j = {{"model", describe(loaded->config)},
                      {"backend", std::string(loaded->model->backend().name())},
                      {"prompt_tokens", prompt.size()},
                      {"text", text},
                      {"tokens", got.tokens},
                      {"finish_reason", std::string(finish_reason_name(got.finish))},
                      {"cached_tokens", cached}};
    if (o.check) j["matches_reference"] = same;
    gpulab::print_json(j);
  } else {
    fmt::print("model:      {}\n", describe(loaded->config));
    fmt::print("backend:    {}\n", loaded->model->backend().name());
    fmt::print("prompt:     {} tokens: {}\n", prompt.size(), gpulab::Json(decode(prompt)).dump());
    fmt::print("completion: {}\n", gpulab::Json(text).dump());
    fmt::print("tokens:     {}\n", fmt::join(got.tokens, " "));
    fmt::print("finish:     {} after {} tokens\n", finish_reason_name(got.finish), got.tokens.size());
    if (o.check)
      fmt::print("{} engine tokens equal the reference decoder's ({} tokens, greedy {})\n", same ? "PASS" : "FAIL",
                 got.tokens.size(), o.params.temperature == 0 ? "yes" : "no");
  }
  return same ? gpulab::kExitOk : gpulab::kExitCheckFailed;
}

int run_throughput(const ThroughputOptions& o) {
  auto loaded = load_model(o.choice, o.engine);
  const auto& c = loaded->config;
  if (o.requests == 0) throw gpulab::UsageError("--requests must be at least 1");
  if (o.prompt_tokens == 0 || o.prompt_tokens + o.max_tokens >= c.max_context)
    throw gpulab::UsageError(fmt::format("--prompt-tokens + --max-tokens must be in 1..{} for this model",
                                         c.max_context - 1));
  if (o.shared_prefix > o.prompt_tokens) throw gpulab::UsageError("--shared-prefix exceeds --prompt-tokens");
  Engine engine(*loaded->model, o.engine);
  gpulab::Rng rng(o.seed);
  std::vector<TokenId> prefix;
  for (std::size_t i = 0; i < o.shared_prefix; ++i) prefix.push_back(static_cast<TokenId>(rng.uniform_int(32, 126)));
  SamplingParams p;
  p.max_tokens = o.max_tokens;
  std::size_t submitted = 0;
  const auto start = std::chrono::steady_clock::now();
  std::size_t steps = 0;
  while (submitted < o.requests || !engine.idle()) {
    // Keep the queue fed but within its bound.
    while (submitted < o.requests && engine.stats().waiting < o.engine.max_waiting) {
      std::vector<TokenId> prompt = prefix;
      while (prompt.size() < o.prompt_tokens) prompt.push_back(static_cast<TokenId>(rng.uniform_int(32, 126)));
      if (!engine.submit(prompt, p)) break;
      ++submitted;
    }
    (void)engine.step();
    ++steps;
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const EngineStats s = engine.stats();
  const double tok_s = static_cast<double>(s.generated_tokens) / secs;
  const double gflops = s.matmul_flops / secs / 1e9;
  if (o.json) {
    gpulab::print_json({{"model", describe(c)},
                        {"backend", std::string(loaded->model->backend().name())},
                        {"requests", o.requests},
                        {"seconds", secs},
                        {"steps", s.steps},
                        {"generated_tokens", s.generated_tokens},
                        {"prefill_tokens", s.prefill_tokens},
                        {"prefix_tokens_skipped", s.prefix_tokens_skipped},
                        {"preemptions", s.preemptions},
                        {"tokens_per_second", tok_s},
                        {"matmul_gflops", gflops}});
    return gpulab::kExitOk;
  }
  fmt::print("model:   {}\nbackend: {}\n", describe(c), loaded->model->backend().name());
  gpulab::Table t;
  for (const char* h : {"requests", "steps", "prefill_tok", "skipped_tok", "generated", "preempt", "seconds", "tok/s",
                        "matmul_GFLOP/s"})
    t.column(h);
  t.row({std::to_string(o.requests), std::to_string(s.steps), std::to_string(s.prefill_tokens),
             std::to_string(s.prefix_tokens_skipped), std::to_string(s.generated_tokens),
             std::to_string(s.preemptions), fmt::format("{:.2f}", secs), fmt::format("{:.1f}", tok_s),
             fmt::format("{:.2f}", gflops)});
  fmt::print("{}", t.render());
  return gpulab::kExitOk;
}

}  // namespace serving
