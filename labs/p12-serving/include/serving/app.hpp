// What gpulab-serve's subcommands do, so main.cpp is only flags: serve over
// HTTP, generate one completion offline (optionally checked against the
// reference decoder), and an offline throughput run.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "gpulab/json.hpp"
#include "serving/engine.hpp"
#include "serving/model_loading.hpp"
#include "serving/server.hpp"

namespace serving {

struct ServeOptions {
  ModelChoice choice;
  EngineOptions engine;
  ServerOptions server;
  std::string listen = "127.0.0.1:8000";
  std::string ready_file;  // gets "http://HOST:PORT" once the port is bound
};
// Blocks until SIGINT or SIGTERM; returns the exit code.
int run_serve(const ServeOptions& options);

struct GenerateOptions {
  ModelChoice choice;
  EngineOptions engine;
  std::string prompt;                  // text, through the tokenizer
  std::vector<TokenId> prompt_ids;     // or token ids
  SamplingParams params;
  bool check = false;                  // compare with the reference decoder
  bool json = false;
};
int run_generate(const GenerateOptions& options);

struct ThroughputOptions {
  ModelChoice choice;
  EngineOptions engine;
  std::size_t requests = 32;
  std::size_t prompt_tokens = 64;
  std::size_t max_tokens = 64;
  std::size_t shared_prefix = 0;  // leading prompt tokens every request shares
  std::uint64_t seed = 1;
  bool json = false;
};
int run_throughput(const ThroughputOptions& options);

}  // namespace serving
