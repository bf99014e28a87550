#include "serving/server.hpp"

#include <fmt/format.h>
#include <httplib.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <mutex>

#include "gpulab/errors.hpp"
#include "gpulab/http/http_service.hpp"
#include "gpulab/text.hpp"
#include "serving/completions_api.hpp"
#include "serving/server_metrics.hpp"

namespace serving {

ListenAddress parse_listen(const std::string& text) {
  const auto colon = text.rfind(':');
  const auto fail = [&] {
    return gpulab::UsageError(fmt::format("--listen: expected HOST:PORT with PORT in 0..65535, got '{}'", text));
  };
  if (colon == std::string::npos || colon == 0 || colon + 1 == text.size()) throw fail();
  ListenAddress a;
  a.host = text.substr(0, colon);
  const std::string port = text.substr(colon + 1);
  if (port.find_first_not_of("0123456789") != std::string::npos || port.size() > 5) throw fail();
  a.port = std::stoi(port);
  if (a.port > 65535) throw fail();
  return a;
}

namespace {

using Clock = std::chrono::steady_clock;

// Hands one request's events from the engine thread to its HTTP thread.
struct Mailbox {
  std::mutex m;
  std::condition_variable cv;
  std::deque<TokenEvent> events;
  void post(const TokenEvent& e) {
    {
      std::lock_guard lk(m);
      events.push_back(e);
    }
    cv.notify_one();
  }
  // Waits up to `wait` for events; returns what arrived (maybe nothing).
  std::deque<TokenEvent> take(std::chrono::milliseconds wait) {
    std::unique_lock lk(m);
    cv.wait_for(lk, wait, [&] { return !events.empty(); });
    return std::exchange(events, {});
  }
};

void reply(httplib::Response& res, int status, const gpulab::Json& body) {
  res.status = status;
  res.set_content(body.dump() + "\n", "application/json");
}

void reply_error(httplib::Response& res, int status, const std::string& field, const std::string& message) {
  reply(res, status, error_body(status, field, message));
}

std::int64_t unix_now() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

// What common's HTTP server is given: each request in flight (a stream included) holds a
// worker; idle and slow clients wait off the workers and are cut off at their deadlines.
gpulab::http::HttpLimits http_limits(const ServerOptions& o) {
  gpulab::http::HttpLimits l;
  l.threads = std::max<std::size_t>(2, o.threads);
  l.max_body_bytes = o.max_body_bytes;
  l.idle_timeout = std::chrono::seconds(o.read_timeout_s);
  l.read_timeout = std::chrono::seconds(o.read_timeout_s);
  l.write_timeout = std::chrono::seconds(o.write_timeout_s);
  return l;
}

struct Server::Impl {
  explicit Impl(const ServerOptions& o) : options(o), http(http_limits(o)) {}
  EngineLoop* loop = nullptr;
  ModelConfig model;
  ServerOptions options;
  gpulab::http::HttpService http;
  std::atomic<std::uint64_t> next_id{1};
  std::atomic<bool> stopped{false};

  void completions(const httplib::Request& req, httplib::Response& res);
  void serve_stream(httplib::Response& res, RequestId id, std::shared_ptr<Mailbox> box, CompletionResult base);
};

void Server::Impl::completions(const httplib::Request& req, httplib::Response& res) {
  CompletionRequest cr;
  try {
    cr = parse_completion_request(req.body, model);
  } catch (const ApiError& e) {
    return reply_error(res, e.status, e.field, e.what());
  }
  auto box = std::make_shared<Mailbox>();
  Refusal why;
  const auto prompt_len = cr.prompt.size();
  auto id = loop->submit(std::move(cr.prompt), cr.params, [box](const TokenEvent& e) { box->post(e); }, &why);
  if (!id) {
    if (why.kind == SubmitError::kQueueFull) {
      res.set_header("Retry-After", "1");
      return reply_error(res, 429, "", why.message);
    }
    return reply_error(res, 400, why.field, why.message);
  }
  CompletionResult result;
  result.id = fmt::format("cmpl-{}", next_id++);
  result.created = unix_now();
  result.prompt_tokens = prompt_len;
  if (cr.stream) return serve_stream(res, id.value(), box, result);
  for (;;) {
    for (const auto& e : box->take(std::chrono::milliseconds(1000))) {
      if (e.token) result.tokens.push_back(*e.token);
      result.cached_tokens = e.cached_tokens;
      if (!e.finish) continue;
      if (*e.finish == FinishReason::kCancelled) return reply_error(res, 503, "", "server is shutting down");
      result.finish = *e.finish;
      return reply(res, 200, completion_body(result, model.name));
    }
  }
}

void Server::Impl::serve_stream(httplib::Response& res, RequestId id, std::shared_ptr<Mailbox> box,
                                CompletionResult base) {
  auto state = std::make_shared<CompletionResult>(std::move(base));
  auto finished = std::make_shared<bool>(false);
  EngineLoop* engine = loop;
  const std::string model_name = model.name;
  res.set_header("Cache-Control", "no-cache");
  // Close-delimited rather than chunked: the Debian libcpp-httplib's chunked
  // done() reads a function-local static string whose guarded initialisation
  // happens inside the uninstrumented library, which TSan reports as a race
  // between concurrent streams. An SSE body ended by closing the connection is
  // equally valid HTTP/1.1, and every SSE client reads it.
  res.set_content_provider(
      "text/event-stream",
      [=](std::size_t, httplib::DataSink& sink) {
        auto send = [&](const gpulab::Json& j) {
          const std::string line = "data: " + j.dump() + "\n\n";
          return sink.write(line.data(), line.size());
        };
        for (const auto& e : box->take(std::chrono::milliseconds(200))) {
          state->cached_tokens = e.cached_tokens;
          std::string text;
          if (e.token) {
            state->tokens.push_back(*e.token);
            const bool stop_token = e.finish && *e.finish == FinishReason::kStop;
            if (!stop_token) text = decode(*e.token);
          }
          if (e.finish) {
            *finished = true;
            if (*e.finish == FinishReason::kCancelled) {
              sink.done();
              return true;
            }
            state->finish = *e.finish;
            if (!send(stream_chunk(state->id, state->created, model_name, text, state.get()))) return false;
            static constexpr std::string_view kDone = "data: [DONE]\n\n";
            if (!sink.write(kDone.data(), kDone.size())) return false;
            sink.done();
            return true;
          }
          if (!send(stream_chunk(state->id, state->created, model_name, text, nullptr))) return false;
        }
        return sink.is_writable();  // a client that went away ends the stream (and the request)
      },
      [=](bool) {
        if (!*finished) engine->cancel(id);
      });
}

Server::Server(EngineLoop& loop, const ModelConfig& model, const ServerOptions& options)
    : impl_(std::make_unique<Impl>(options)) {
  impl_->loop = &loop;
  impl_->model = model;
  auto& http = impl_->http;
  http.set_error_handler([max = options.max_body_bytes](const httplib::Request&, httplib::Response& res) {
    if (res.status == 413)
      reply_error(res, 413, "body", fmt::format("body: larger than the limit of {} bytes", max));
    else if (res.body.empty())
      reply_error(res, res.status, "", fmt::format("HTTP {}", res.status));
  });
  http.set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr ep) {
    try {
      std::rethrow_exception(ep);
    } catch (const std::exception& e) {
      reply_error(res, 500, "", e.what());
    }
  });
  Impl* impl = impl_.get();
  http.Post("/v1/completions",
            [impl](const httplib::Request& req, httplib::Response& res) { impl->completions(req, res); });
  http.Get("/v1/models",
           [impl](const httplib::Request&, httplib::Response& res) { reply(res, 200, models_body(impl->model)); });
  http.Get("/health", [](const httplib::Request&, httplib::Response& res) {
    reply(res, 200, gpulab::Json{{"status", "ok"}});
  });
  http.Get("/metrics", [impl](const httplib::Request&, httplib::Response& res) {
    res.set_content(server_metrics(impl->loop->snapshot(), impl->model.name).render(),
                    std::string(gpulab::prom::kContentType));
  });
}

Server::~Server() = default;

int Server::bind(const ListenAddress& address) { return impl_->http.bind(address.host, address.port); }

void Server::run() {
  if (impl_->stopped) return;
  impl_->http.listen_after_bind();
}

void Server::stop() {
  impl_->stopped = true;
  impl_->http.stop();
}

}  // namespace serving
