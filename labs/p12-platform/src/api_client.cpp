#include "platform/api_client.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>

#include "gpulab/errors.hpp"
#include "platform/local_cluster.hpp"

namespace platform {
namespace {

using gpulab::Json;

[[noreturn]] void fail(const std::string& url, const httplib::Result& res) {
  if (!res) {
    throw gpulab::RunError(
        fmt::format("cannot reach the control plane at {}: {}", url, httplib::to_string(res.error())));
  }
  std::string message = res->body;
  try {
    message = Json::parse(res->body).at("error").get<std::string>();
  } catch (const std::exception&) {
    while (!message.empty() && message.back() == '\n') message.pop_back();
  }
  if (res->status == 403) throw gpulab::RunError(fmt::format("refused: {}", message));
  if (res->status >= 400 && res->status < 500) throw gpulab::UsageError(message);
  throw gpulab::RunError(fmt::format("the control plane answered {}: {}", res->status, message));
}

Json parse_body(const std::string& url, const std::string& body) {
  try {
    return Json::parse(body);
  } catch (const Json::exception&) {
    throw gpulab::RunError(fmt::format("{} answered something that is not JSON", url));
  }
}

}  // namespace

std::string default_control_url() {
  const char* env = std::getenv("GPULAB_CONTROL");
  return env != nullptr && *env != '\0' ? env : "http://127.0.0.1:7070";
}

ApiClient::ApiClient(std::string url) : url_(std::move(url)) {
  if (url_.rfind("http://", 0) != 0) {
    throw gpulab::UsageError(fmt::format("--control '{}': expected http://HOST:PORT", url_));
  }
  client_ = std::make_unique<httplib::Client>(url_);
  if (!client_->is_valid()) throw gpulab::UsageError(fmt::format("--control '{}': not a valid URL", url_));
  client_->set_tcp_nodelay(true);  // headers and body in separate writes: no 40 ms Nagle stall
  client_->set_connection_timeout(3, 0);
  client_->set_read_timeout(30, 0);
  client_->set_write_timeout(10, 0);
}

Json ApiClient::get(const std::string& path) const { return parse_body(url_, get_text(path)); }

std::string ApiClient::get_text(const std::string& path) const {
  const auto res = client_->Get(path);
  if (!res || res->status >= 400) fail(url_, res);
  return res->body;
}

Json ApiClient::post(const std::string& path, const std::string& body, const std::string& idempotency_key,
                     int* status) const {
  httplib::Headers headers;
  if (!idempotency_key.empty()) headers.emplace("Idempotency-Key", idempotency_key);
  const auto res = client_->Post(path, headers, body, "application/json");
  if (!res || res->status >= 400) fail(url_, res);
  if (status != nullptr) *status = res->status;
  return parse_body(url_, res->body);
}

Json wait_for_job(const ApiClient& api, const std::string& id, std::initializer_list<std::string_view> states,
                  std::chrono::milliseconds timeout) {
  Json job;
  wait_until(
      [&] {
        job = api.get("/v1/jobs/" + id);
        return std::find(states.begin(), states.end(), job.at("state").get<std::string>()) != states.end();
      },
      timeout);
  return job;
}

std::string node_state(const ApiClient& api, const std::string& name) {
  for (const auto& n : api.get("/v1/nodes")) {
    if (n.at("name") == name) return n.at("state").get<std::string>();
  }
  return "?";
}

}  // namespace platform
