// The HTTP front end (cpp-httplib): POST /v1/completions (JSON or
// server-sent events), GET /v1/models, /health and /metrics, with bounded
// bodies, read/write timeouts, and every refusal an OpenAI-style error body
// naming the field: 400 bad field, 404 another model, 413 body too large,
// 429 queue full.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "serving/engine_loop.hpp"
#include "serving/model_config.hpp"

namespace serving {

struct ListenAddress {
  std::string host;
  int port = 0;  // 0: any free port
};
// "HOST:PORT"; throws gpulab::UsageError naming --listen.
ListenAddress parse_listen(const std::string& text);

struct ServerOptions {
  std::size_t threads = 16;                  // HTTP worker threads (each in-flight request holds one)
  std::size_t max_body_bytes = 1 << 20;      // larger bodies: 413
  int read_timeout_s = 10, write_timeout_s = 10;
};

class Server {
 public:
  Server(EngineLoop& loop, const ModelConfig& model, const ServerOptions& options);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Binds and returns the port (the chosen one for port 0). Throws gpulab::RunError.
  int bind(const ListenAddress& address);
  // Serves until stop(); returns at once if stop() came first.
  void run();
  void stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace serving
