// /metrics over HTTP with cpp-httplib (Debian's libcpp-httplib-dev), hardened
// against clients that would hold or bloat a worker: connections wait in a
// ConnectionGate (bounded in number, per client and in total) until their
// request header is whole, within `request_timeout` of the accept and within
// `max_request_bytes`; a response write gives up after `write_timeout`, and a
// keep-alive connection serves at most `keep_alive_max` requests. The port is
// bound without SO_REUSEPORT, so a second exporter on a taken port fails to
// start. Unknown paths get 404.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "exporter/collector.hpp"
#include "exporter/connection_gate.hpp"

namespace exporter {

struct ListenAddress {
  std::string host;  // as given ("127.0.0.1", "::1", "0.0.0.0")
  int port = 0;      // 0: any free port
};
// "HOST:PORT" or "[V6]:PORT"; throws gpulab::UsageError.
ListenAddress parse_listen_address(std::string_view text);

struct ServerOptions {
  GateLimits gate;  // header deadline from accept, keep-alive idle time, header budget, connection bounds
  std::chrono::milliseconds write_timeout{5000};
  std::size_t keep_alive_max = 100;  // requests per connection
  std::size_t threads = 16;          // workers; they only see whole requests
};

class MetricsServer {
 public:
  MetricsServer(const Collector& collector, ServerOptions options);
  ~MetricsServer();
  MetricsServer(const MetricsServer&) = delete;
  MetricsServer& operator=(const MetricsServer&) = delete;

  // Binds; returns the port (the chosen one when the address says 0). Throws
  // gpulab::RunError if the address cannot be bound (in use, not local).
  int bind(const ListenAddress& address);
  // Serves until stop(); false if the listening socket failed.
  bool run();
  void stop();

  class Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace exporter
