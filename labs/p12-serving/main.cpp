// gpulab-serve: an OpenAI-style completions server for a small decoder-only
// transformer run through the HAL, with continuous batching, a paged KV cache
// and prefix caching. Subcommands generate one completion offline and measure
// offline throughput.
#include <fmt/format.h>

#include "gpulab/cli.hpp"
#include "gpulab/flag_checks.hpp"
#include "gpulab/text.hpp"
#include "serving/app.hpp"
#include "serving/batching_sweep.hpp"
#include "serving/demo.hpp"
#include "serving/load_generator.hpp"
#include "serving/sim_compare.hpp"

namespace {

constexpr const char* kProgram = "gpulab-serve";

void add_model_flags(CLI::App& app, serving::ModelChoice& m, serving::EngineOptions& e) {
  app.add_option("--model", m.model, "Model: a preset (small, tiny) or a JSON config file")->capture_default_str();
  app.add_option("--backend", m.backend, "HAL backend for the matmuls: auto (the router's pick) or a name")
      ->capture_default_str();
  app.add_option("--block-size", e.block_size, "Tokens per KV block")->capture_default_str();
  app.add_option("--kv-blocks", e.kv_blocks, "KV blocks in the pool (must hold one full context)")
      ->capture_default_str();
  app.add_option("--max-running", e.max_running, "Sequences per batch")->capture_default_str();
  app.add_option("--max-batched-tokens", e.max_batched_tokens,
                 "Token budget per step: decodes first, then prompt chunks")
      ->capture_default_str();
  app.add_option("--max-waiting", e.max_waiting, "Queued requests beyond which new ones are refused (HTTP 429)")
      ->capture_default_str();
  app.add_flag("!--no-prefix-cache", e.prefix_cache, "Turn automatic prefix caching off");
  app.add_flag("--static-batching", e.static_batching,
               "Admit a new batch only when the last one has drained (the baseline for continuous batching)");
}

constexpr const char* kModelFlagsFooter =
    "Model and engine flags (--model, --backend, --block-size, ...) are gpulab-serve's: see its --help.";

// How a trace is fitted to the model: loadgen, compare-sim and batching-sweep read it the same way.
void add_trace_flags(CLI::App& app, serving::TraceShaping& s, bool with_speed) {
  app.add_option("--max-requests", s.max_requests, "Replay only the first N requests (0: all)")
      ->check(gpulab::whole_in<std::size_t>(0, 1'000'000))
      ->capture_default_str();
  if (with_speed)
    app.add_option("--speed", s.speed, "Arrivals this many times faster than the trace, in [0.001, 10000]")
        ->check(gpulab::finite_in(1e-3, 1e4))
        ->capture_default_str();
  app.add_option("--seed", s.seed, "Seed of the prompts' token ids")
      ->check(gpulab::whole_in<std::uint64_t>())
      ->capture_default_str();
  app.add_option("--shared-prefix", s.shared_prefix,
                 "Every prompt starts with the same this many tokens (a system prompt), before its own")
      ->check(gpulab::whole_in<std::size_t>(0, 1'000'000))
      ->capture_default_str();
  app.add_option("--max-output", s.max_output, "Cap each request's output tokens (0: the trace's)")
      ->check(gpulab::whole_in<std::size_t>(0, 1'000'000))
      ->capture_default_str();
  app.add_option("--max-prompt", s.max_prompt,
                 "Cap each prompt's own tokens, after the shared prefix (0: half of what the context leaves)")
      ->check(gpulab::whole_in<std::size_t>(0, 1'000'000))
      ->capture_default_str();
}

std::vector<serving::TokenId> parse_ids(const std::string& text) {
  std::vector<serving::TokenId> ids;
  for (const auto& field : gpulab::split_fields(text, ',')) {
    std::int32_t v = 0;
    if (!gpulab::parse_number(field, v))
      throw gpulab::UsageError(fmt::format("--prompt-ids: '{}' is not a token id", field));
    ids.push_back(v);
  }
  return ids;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "Serves completions (OpenAI /v1/completions shape) from a seeded decoder-only transformer whose matmuls run "
      "through the HAL: continuous batching, paged KV cache, prefix caching, preemption by recompute.\n"
      "With no subcommand it serves HTTP until SIGINT/SIGTERM."};
  serving::ServeOptions serve;
  // One set of model and engine flags, on the program; fallthrough lets them
  // follow a subcommand too (`gpulab-serve generate --model tiny ...`).
  add_model_flags(app, serve.choice, serve.engine);
  app.fallthrough();
  app.add_option("--listen", serve.listen, "HOST:PORT to serve on (port 0: any free port)")->capture_default_str();
  app.add_option("--ready-file", serve.ready_file, "Write the server's URL here once it listens");
  serve.server.threads = 0;
  app.add_option("--threads", serve.server.threads,
                 "HTTP worker threads; 0: max-running + max-waiting + 4, so every request the engine can hold "
                 "has a thread and a full queue answers 429 instead of piling up in the HTTP layer")
      ->capture_default_str();

  serving::GenerateOptions gen;
  std::string prompt_ids;
  auto* generate = app.add_subcommand("generate", "Generate one completion offline through the engine");
  generate->footer(kModelFlagsFooter);
  generate->add_option("--prompt", gen.prompt, "Prompt text (ASCII: one token per character)");
  generate->add_option("--prompt-ids", prompt_ids, "Prompt as comma-separated token ids");
  generate->add_option("--max-tokens", gen.params.max_tokens, "Tokens to generate at most")
      ->check(gpulab::whole_in<long long>(1, 1'000'000))
      ->capture_default_str();
  generate->add_option("--temperature", gen.params.temperature, "0: greedy")->capture_default_str();
  generate->add_option("--top-p", gen.params.top_p, "Nucleus sampling mass")->capture_default_str();
  generate->add_option("--seed", gen.params.seed, "Sampling seed")->capture_default_str();
  generate->add_flag("--check", gen.check, "Also run the reference decoder and compare (PASS/FAIL, exit 1 on FAIL)");
  generate->add_flag("--json", gen.json, "Print one JSON document");

  serving::ThroughputOptions tp;
  auto* throughput = app.add_subcommand("throughput", "Offline throughput: N requests through the engine, no HTTP");
  throughput->footer(kModelFlagsFooter);
  throughput->add_option("--requests", tp.requests, "Requests")->capture_default_str();
  throughput->add_option("--prompt-tokens", tp.prompt_tokens, "Prompt length")->capture_default_str();
  throughput->add_option("--max-tokens", tp.max_tokens, "Tokens generated per request")
      ->check(gpulab::whole_in<long long>(1, 1'000'000))
      ->capture_default_str();
  throughput->add_option("--shared-prefix", tp.shared_prefix, "Leading prompt tokens all requests share")
      ->capture_default_str();
  throughput->add_option("--seed", tp.seed, "Prompt seed")->capture_default_str();
  throughput->add_flag("--json", tp.json, "Print one JSON document");

  auto* demo = app.add_subcommand("demo", "Start the server on a free loopback port and run a scripted, checked HTTP session");
  demo->footer(kModelFlagsFooter);

  serving::LoadOptions load;
  auto* loadgen = app.add_subcommand(
      "loadgen", "Replay a P07 trace (plain or Azure CSV) against a running server over HTTP; TTFT/TPOT, goodput");
  loadgen->add_option("--url", load.url, "The server")->capture_default_str();
  loadgen->add_option("--trace", load.trace, "Trace CSV: arrival_ms,prompt_tokens,output_tokens or Azure's layout")
      ->required();
  add_trace_flags(*loadgen, load.shaping, true);
  loadgen->add_option("--slo-ttft-ms", load.slo.ttft_ms, "Goodput SLO: TTFT below this")->capture_default_str();
  loadgen->add_option("--slo-tpot-ms", load.slo.tpot_ms, "Goodput SLO: TPOT below this")->capture_default_str();
  loadgen->add_flag("--json", load.json, "Print one JSON document");

  serving::CompareSimOptions cmp;
  cmp.shaping.max_requests = 24;
  cmp.shaping.max_output = 32;
  cmp.shaping.max_prompt = 128;
  auto* compare = app.add_subcommand(
      "compare-sim",
      "Replay a P07 trace through the engine in-process, fit batching-sim's cost model to the measured step times, "
      "run the same trace through batching-sim and print predicted vs measured with the error");
  compare->footer(kModelFlagsFooter);
  compare->add_option("--trace", cmp.trace, "Trace CSV: arrival_ms,prompt_tokens,output_tokens or Azure's layout")
      ->required();
  add_trace_flags(*compare, cmp.shaping, true);
  compare->add_flag("--json", cmp.json, "Print one JSON document");

  serving::SweepOptions sweep;
  sweep.shaping.max_requests = 16;
  sweep.shaping.max_output = 32;
  sweep.shaping.max_prompt = 128;
  auto* sweeper = app.add_subcommand(
      "batching-sweep",
      "Continuous vs static batching at equal p99 TTFT: the same trace at rising arrival rates through the engine "
      "in each mode, the highest rate each holds the target at, and the throughput ratio there");
  sweeper->footer(kModelFlagsFooter);
  sweeper->add_option("--trace", sweep.trace, "Trace CSV: arrival_ms,prompt_tokens,output_tokens or Azure's layout")
      ->required();
  add_trace_flags(*sweeper, sweep.shaping, false);
  sweeper->add_option("--ttft-p99-ms", sweep.ttft_p99_ms, "The p99 TTFT target both modes are held to, in ms, in [0.001, 1e6]")
      ->check(gpulab::finite_in(1e-3, 1e6))
      ->capture_default_str();
  sweeper->add_option("--min-speed", sweep.min_speed, "First arrival speed-up tried, in [0.001, 10000]")
      ->check(gpulab::finite_in(1e-3, 1e4))
      ->capture_default_str();
  sweeper->add_option("--max-speed", sweep.max_speed, "Highest arrival speed-up tried, in [0.001, 10000]")
      ->check(gpulab::finite_in(1e-3, 1e4))
      ->capture_default_str();
  sweeper->add_option("--refine", sweep.refine, "Bisection steps after doubling, 0..8")
      ->check(gpulab::whole_in<std::size_t>(0, 8))
      ->capture_default_str();
  sweeper->add_flag("--json", sweep.json, "Print one JSON document");

  return gpulab::run_program(kProgram, app, argc, argv, [&] {
    gen.choice = tp.choice = serve.choice;
    gen.engine = tp.engine = serve.engine;
    if (generate->parsed()) {
      if (!prompt_ids.empty()) gen.prompt_ids = parse_ids(prompt_ids);
      if (gen.prompt.empty() == gen.prompt_ids.empty())
        throw gpulab::UsageError("generate: give exactly one of --prompt and --prompt-ids");
      return serving::run_generate(gen);
    }
    if (throughput->parsed()) return serving::run_throughput(tp);
    if (loadgen->parsed()) return serving::run_loadgen(load);
    if (compare->parsed()) {
      cmp.choice = serve.choice;
      cmp.engine = serve.engine;
      return serving::run_compare_sim(cmp);
    }
    if (sweeper->parsed()) {
      sweep.choice = serve.choice;
      sweep.engine = serve.engine;
      return serving::run_batching_sweep(sweep);
    }
    if (demo->parsed()) return serving::run_demo(serve.choice, serve.engine);
    return serving::run_serve(serve);
  });
}
